//! What changed in an object between two watch updates, field by field, and who wrote it.
//! The live store calls [`track`] before it replaces an object, so that each object carries
//! the last few changes the watch delivered (`Meta::changes`) into the analysis, which merges
//! them into each restore's history.

use crate::cluster::ObjKey;
use crate::cluster::snapshot::Objects;
use crate::model::held::held_json;
use crate::model::history::{CHANGES_PER_OBJECT, FieldChange, ManagedEntry};
use crate::model::secrets::{REDACTED, is_credential_key, redact_credentials};
use crate::model::{AnyObject, Kind};
use jiff::Timestamp;
use serde_json::Value;
use std::sync::Arc;

/// Field changes kept from one update: a rewrite of a whole object is summarised, not listed.
const CHANGES_PER_UPDATE: usize = 8;
/// Values are cut here: a history line is a line.
const VALUE_MAX_CHARS: usize = 120;

/// The kinds restores are built on; namespaces, classes, pods and events have no history here.
fn tracked(kind: Kind) -> bool {
    !matches!(
        kind,
        Kind::Namespace | Kind::StorageClass | Kind::Pod | Kind::Event
    )
}

/// Carries the change history of the object `new` replaces (same key, same UID) over to `new`
/// and appends what this update changed. A recreated object (another UID) starts afresh.
pub fn track(objects: &Objects, new: &mut AnyObject, seen: Timestamp) {
    let kind = new.kind();
    if !tracked(kind) {
        return;
    }
    let key = ObjKey::new(new.meta().namespace.clone(), new.meta().name.clone());
    let Some(old) = objects.any(kind, &key) else {
        return;
    };
    let old_meta = old.meta();
    if old_meta.uid != new.meta().uid {
        return;
    }
    let mut ring = old_meta.changes.clone();
    if old_meta.resource_version != new.meta().resource_version {
        // Both texts when both are kept, else what is held of both (`held_json`): the same
        // form on each side, so that only real changes differ.
        let (before, after) = if old.has_text() && new.has_text() {
            let text = |o: &AnyObject| serde_json::from_str(&o.raw()).unwrap_or(Value::Null);
            (text(&old), text(new))
        } else {
            (held_json(&old), held_json(new))
        };
        let mut paths = Vec::new();
        diff(&before, &after, &mut String::new(), &mut paths);
        let writers = writers(&old_meta.managed, &new.meta().managed);
        for (path, b, a) in paths {
            let who = attribute(&writers, &new.meta().managed, &path);
            ring.push(FieldChange {
                time: seen,
                path: path.into(),
                before: b.map(Into::into),
                after: a.map(Into::into),
                manager: who.map(|w| Arc::clone(&w.manager)),
                operation: who.map(|w| Arc::clone(&w.operation)),
            });
        }
    }
    if ring.len() > CHANGES_PER_OBJECT {
        ring.drain(..ring.len() - CHANGES_PER_OBJECT);
    }
    new.meta_mut().changes = ring;
}

/// The managedFields entries this update wrote: new, or with another time or field set.
fn writers<'a>(old: &[ManagedEntry], new: &'a [ManagedEntry]) -> Vec<&'a ManagedEntry> {
    new.iter()
        .filter(|n| {
            !old.iter().any(|o| {
                o.manager == n.manager
                    && o.operation == n.operation
                    && o.subresource == n.subresource
                    && o.time == n.time
                    && o.fields == n.fields
            })
        })
        .collect()
}

/// Who wrote `path`: the entry this update wrote that owns it, else the newest one this update
/// wrote of the same part (status or not), else any it wrote, else the field's newest owner
/// (a manager writing again within the same second leaves its entry as it was).
fn attribute<'a>(
    writers: &[&'a ManagedEntry],
    all: &'a [ManagedEntry],
    path: &str,
) -> Option<&'a ManagedEntry> {
    let newest = |it: &mut dyn Iterator<Item = &'a ManagedEntry>| it.max_by_key(|e| e.time);
    let status = path == "status" || path.starts_with("status.");
    // A status write goes through the status subresource, a spec write does not.
    let fits = |e: &&ManagedEntry| (e.subresource.as_deref() == Some("status")) == status;
    newest(&mut writers.iter().copied().filter(|e| e.owns(path)))
        .or_else(|| newest(&mut writers.iter().copied().filter(fits)))
        .or_else(|| newest(&mut writers.iter().copied()))
        .or_else(|| newest(&mut all.iter().filter(|e| e.owns(path))))
}

/// Paths that change on every write and say nothing.
fn noise(path: &str) -> bool {
    matches!(
        path,
        "apiVersion"
            | "kind"
            | "metadata.resourceVersion"
            | "metadata.generation"
            | "metadata.managedFields"
    )
}

type PathChange = (String, Option<String>, Option<String>);

/// Appends each leaf that differs between `a` and `b` (objects key by key, lists of one length
/// item by item, anything else whole), at most `CHANGES_PER_UPDATE`; past that one line says
/// how many more fields changed.
pub fn diff(a: &Value, b: &Value, path: &mut String, out: &mut Vec<PathChange>) {
    let mut all = Vec::new();
    walk(a, b, path, &mut all);
    let extra = all.len().saturating_sub(CHANGES_PER_UPDATE);
    if extra > 0 {
        all.truncate(CHANGES_PER_UPDATE - 1);
        all.push((format!("(+{} more fields)", extra + 1), None, None));
    }
    out.extend(all);
}

fn walk(a: &Value, b: &Value, path: &mut String, out: &mut Vec<PathChange>) {
    if a == b || noise(path) {
        return;
    }
    let hidden = path_is_secret(path);
    let empty = serde_json::Map::new();
    match (a, b) {
        // A map that appears or goes away is listed field by field, as a change inside it is.
        (Value::Object(x), Value::Null) | (Value::Null, Value::Object(x)) if !hidden => {
            let (x, y) = if a.is_null() {
                (&empty, x)
            } else {
                (x, &empty)
            };
            walk_maps(x, y, path, out);
        }
        (Value::Object(x), Value::Object(y)) if !hidden => walk_maps(x, y, path, out),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() && !hidden => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(p, q, path, out);
                path.truncate(len);
            }
        }
        // Conditions and named items that come and go: matched by `type` / `name`, the path
        // naming the index in the newer list (or the older one, for an item removed).
        (Value::Array(x), Value::Array(y))
            if !hidden && keyed(x).is_some() && keyed(y) == keyed(x) =>
        {
            let key = keyed(x).unwrap_or("name");
            let id = |v: &Value| v.get(key).cloned();
            for (i, q) in y.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                match x.iter().find(|p| id(p) == id(q)) {
                    Some(before) => walk(before, q, path, out),
                    // A new item is one line, not one per field.
                    None => out.push((path.clone(), None, Some(value_text(q)))),
                }
                path.truncate(len);
            }
            for (j, p) in x.iter().enumerate() {
                if !y.iter().any(|q| id(q) == id(p)) {
                    let len = path.len();
                    path.push_str(&format!("[{j}]"));
                    out.push((path.clone(), Some(value_text(p)), None));
                    path.truncate(len);
                }
            }
        }
        _ => {
            let show = |v: &Value| {
                (!v.is_null()).then(|| {
                    if hidden {
                        REDACTED.to_string()
                    } else {
                        value_text(v)
                    }
                })
            };
            out.push((path.clone(), show(a), show(b)));
        }
    }
}

/// The key list items are told apart by, when every item has one: `type` (conditions) or
/// `name` (plugins, containers, volumes).
fn keyed(items: &[Value]) -> Option<&'static str> {
    ["type", "name"].into_iter().find(|k| {
        !items.is_empty()
            && items
                .iter()
                .all(|i| i.get(*k).is_some_and(Value::is_string))
    })
}

fn walk_maps(
    x: &serde_json::Map<String, Value>,
    y: &serde_json::Map<String, Value>,
    path: &mut String,
    out: &mut Vec<PathChange>,
) {
    let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
    for k in keys {
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(k);
        walk(
            x.get(k).unwrap_or(&Value::Null),
            y.get(k).unwrap_or(&Value::Null),
            path,
            out,
        );
        path.truncate(len);
    }
}

/// A value as a history line shows it: strings bare, anything else as compact JSON with
/// credentials hidden, cut at `VALUE_MAX_CHARS`.
fn value_text(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => {
            let mut c = other.clone();
            redact_credentials(&mut c);
            serde_json::to_string(&c).unwrap_or_default()
        }
    };
    if s.chars().count() > VALUE_MAX_CHARS {
        let mut cut: String = s.chars().take(VALUE_MAX_CHARS - 1).collect();
        cut.push('…');
        cut
    } else {
        s
    }
}

/// Whether a path passes under a key that holds a credential. Stricter than the YAML view,
/// which keeps what only points at a Secret below such a key: a change line has no context
/// to tell the two apart, so the whole subtree is hidden.
fn path_is_secret(path: &str) -> bool {
    path.split(['.', '['])
        .any(|seg| is_credential_key(seg.trim_end_matches(']')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Snapshot;
    use crate::model::parse_object;
    use serde_json::json;

    fn cluster(rv: &str, server: &str, managed: Value) -> Value {
        json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
               "metadata": {"name": "postgres-pg1", "namespace": "t", "uid": "u1",
                            "resourceVersion": rv, "managedFields": managed},
               "spec": {"instances": 2, "plugins": [{"name": "barman-cloud.cloudnative-pg.io",
                        "parameters": {"serverName": server, "barmanObjectName": "postgres-pg1"}}]}})
    }

    fn entry(manager: &str, time: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": "Apply", "time": time, "fieldsType": "FieldsV1",
               "fieldsV1": fields})
    }

    #[test]
    fn a_revert_is_recorded_with_both_values_and_its_writer() {
        let helm = entry(
            "helm-controller",
            "2026-01-01T00:00:03Z",
            json!({"f:spec": {"f:instances": {}, "f:plugins": {}}}),
        );
        let first = cluster("10", "postgres-pg1-restore-5f3c", json!([helm.clone()]));
        let mut helm_after = helm.clone();
        helm_after["fieldsV1"] = json!({"f:spec": {"f:instances": {}}});
        let driver = entry(
            "cozystack-cnpg-backup-driver",
            "2026-01-01T00:00:07Z",
            json!({"f:spec": {"f:plugins": {}}}),
        );
        let second = cluster("11", "postgres-pg1", json!([helm_after, driver]));
        let snap = Snapshot::from_objects([parse_object(first).expect("object")]);
        let mut new = parse_object(second).expect("object");
        track(
            &snap.objects,
            &mut new,
            "2026-01-01T00:00:08Z".parse().expect("time"),
        );
        let c = &new.meta().changes;
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(&*c[0].path, "spec.plugins[0].parameters.serverName");
        assert_eq!(c[0].before.as_deref(), Some("postgres-pg1-restore-5f3c"));
        assert_eq!(c[0].after.as_deref(), Some("postgres-pg1"));
        assert_eq!(
            c[0].manager.as_deref(),
            Some("cozystack-cnpg-backup-driver")
        );
        assert_eq!(
            c[0].time.to_string(),
            "2026-01-01T00:00:08Z",
            "when the watch saw it"
        );
    }

    #[test]
    fn the_ring_is_carried_over_bounded_and_dropped_for_a_new_uid() {
        let mut snap = Snapshot::default();
        let mut obj = parse_object(cluster("1", "s0", json!([]))).expect("object");
        snap.objects.insert(obj.clone());
        for i in 1..=(CHANGES_PER_OBJECT + 4) {
            obj = parse_object(cluster(&format!("{}", i + 1), &format!("s{i}"), json!([])))
                .expect("object");
            track(&snap.objects, &mut obj, Timestamp::UNIX_EPOCH);
            snap.objects.insert(obj.clone());
        }
        let c = &obj.meta().changes;
        assert_eq!(c.len(), CHANGES_PER_OBJECT);
        assert_eq!(c.last().and_then(|x| x.after.as_deref()), Some("s20"));
        assert!(
            c.iter().all(|x| x.manager.is_none()),
            "no managedFields, no manager"
        );
        let mut other = cluster("99", "x", json!([]));
        other["metadata"]["uid"] = json!("u2");
        let mut recreated = parse_object(other).expect("object");
        track(&snap.objects, &mut recreated, Timestamp::UNIX_EPOCH);
        assert!(recreated.meta().changes.is_empty());
    }

    #[test]
    fn credentials_never_appear_in_a_change() {
        let a = json!({"spec": {"users": {"app": {"password": "old-pw"}}, "s3SecretKey": "k1",
                                "secretName": "s1", "x": {"a": 1}}});
        let b = json!({"spec": {"users": {"app": {"password": "new-pw"}}, "s3SecretKey": "k2",
                                "secretName": "s2", "x": {"a": 1, "token": "t0p"}}});
        let mut out = Vec::new();
        diff(&a, &b, &mut String::new(), &mut out);
        let text = format!("{out:?}");
        for secret in ["old-pw", "new-pw", "k1", "k2", "t0p"] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        assert!(
            text.contains("s2"),
            "a Secret's name is not a secret: {text}"
        );
        assert!(text.contains(REDACTED), "{text}");
    }

    #[test]
    fn lists_of_another_length_and_big_rewrites_are_summarised() {
        let a = json!({"metadata": {"finalizers": ["a"], "resourceVersion": "1"}});
        let b = json!({"metadata": {"finalizers": ["a", "b"], "resourceVersion": "2"}});
        let mut out = Vec::new();
        diff(&a, &b, &mut String::new(), &mut out);
        assert_eq!(
            out,
            vec![(
                "metadata.finalizers".to_string(),
                Some(r#"["a"]"#.to_string()),
                Some(r#"["a","b"]"#.to_string())
            )]
        );
        let a = json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
        let b = json!({"status": {"conditions": [{"type": "Ready", "status": "True"},
                                                 {"type": "TargetPurged", "status": "True"}]}});
        let mut out = Vec::new();
        diff(&a, &b, &mut String::new(), &mut out);
        assert_eq!(
            out,
            vec![
                (
                    "status.conditions[0].status".to_string(),
                    Some("False".to_string()),
                    Some("True".to_string())
                ),
                (
                    "status.conditions[1]".to_string(),
                    None,
                    Some(r#"{"status":"True","type":"TargetPurged"}"#.to_string())
                ),
            ]
        );
        let mut out = Vec::new();
        diff(
            &json!({}),
            &json!({"status": {"phase": "Running"}}),
            &mut String::new(),
            &mut out,
        );
        assert_eq!(
            out,
            vec![(
                "status.phase".to_string(),
                None,
                Some("Running".to_string())
            )]
        );
        let wide_a = json!({"spec": (0..20).map(|i| (format!("k{i:02}"), json!(i))).collect::<serde_json::Map<_, _>>()});
        let wide_b = json!({"spec": (0..20).map(|i| (format!("k{i:02}"), json!(i + 1))).collect::<serde_json::Map<_, _>>()});
        let mut out = Vec::new();
        diff(&wide_a, &wide_b, &mut String::new(), &mut out);
        assert_eq!(out.len(), CHANGES_PER_UPDATE);
        assert_eq!(out.last().map(|x| x.0.as_str()), Some("(+13 more fields)"));
    }
}
