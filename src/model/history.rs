//! What an object remembers of who changed it: the summary of its `managedFields` (the API
//! server's record of each writer, kept when the bulky field trees are stripped) and a small
//! ring of the field-level changes the live watch delivered. Report 003 was diagnosed from
//! exactly this: helm-controller Apply at +3 s, then cozystack-cnpg-backup-driver Apply at +7 s
//! writing the old serverName back.

use super::json::{opt_str, time_at};
use jiff::Timestamp;
use serde_json::Value;
use std::collections::HashSet;
use std::hash::Hash;
use std::sync::{Arc, LazyLock, Mutex};

/// Field changes kept per object: the recent past of one object, not its whole life.
pub const CHANGES_PER_OBJECT: usize = 16;
/// managedFields entries kept per object (a real object has a handful).
pub const MANAGERS_PER_OBJECT: usize = 12;
/// Owned fields named per managedFields entry.
const FIELDS_PER_MANAGER: usize = 12;

/// One `metadata.managedFields` entry, summarised: who wrote, how, when, and the fields it owns
/// to two levels (`spec.plugins`, `metadata.labels`, `status.phase`).
///
/// Only the time is the entry's own: who wrote how and what (`Writer`) is shared through a
/// pool, since every bound PVC of a cluster carries the same kube-controller-manager entry.
/// That is 32 bytes an entry instead of 88, and the 20k objects of a real server carry ~37k
/// entries. `Writer`'s fields read as the entry's own (`e.manager`) through `Deref`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedEntry {
    pub writer: Arc<Writer>,
    pub time: Option<Timestamp>,
}

/// Who wrote a managedFields entry, how, and the fields it owns: shared between objects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Writer {
    pub manager: Arc<str>,
    /// `Update` or `Apply`, as written.
    pub operation: Arc<str>,
    /// `status` for writes through the status subresource.
    pub subresource: Option<Arc<str>>,
    pub fields: Arc<[Arc<str>]>,
}

impl std::ops::Deref for ManagedEntry {
    type Target = Writer;
    fn deref(&self) -> &Writer {
        &self.writer
    }
}

impl ManagedEntry {
    /// Whether this entry owns `path` (`spec.plugins[0].parameters.serverName` is owned by an
    /// entry owning `spec.plugins` or `spec`).
    pub fn owns(&self, path: &str) -> bool {
        self.fields.iter().any(|f| {
            path.strip_prefix(&**f)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        })
    }
}

/// One field as a watch update changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    /// When the watch delivered it (the dashboard's clock, to the nanosecond: managedFields
    /// times have whole seconds only).
    pub time: Timestamp,
    /// `spec.plugins[0].parameters.serverName`.
    pub path: Arc<str>,
    /// The value before and after as compact JSON text (`None`: absent). Already redacted:
    /// credentials never get here.
    pub before: Option<Arc<str>>,
    pub after: Option<Arc<str>>,
    /// Who wrote it, where managedFields tell.
    pub manager: Option<Arc<str>>,
    pub operation: Option<Arc<str>>,
}

/// Distinct values shared by every object's summary: managers, operations and field names
/// repeat across thousands of objects (every bound PVC has the same kube-controller-manager
/// entry), so each is stored once. Capped, so that crafted objects cannot grow it without end;
/// past the cap a value is simply not shared.
const POOL_MAX: usize = 4096;

struct Pool<T: ?Sized>(LazyLock<Mutex<HashSet<Arc<T>>>>);

impl<T: ?Sized + Eq + Hash> Pool<T> {
    const fn new() -> Self {
        Pool(LazyLock::new(|| Mutex::new(HashSet::new())))
    }

    fn get(&self, v: Arc<T>) -> Arc<T> {
        let Ok(mut set) = self.0.lock() else {
            return v;
        };
        if let Some(shared) = set.get(&v) {
            return Arc::clone(shared);
        }
        if set.len() < POOL_MAX {
            set.insert(Arc::clone(&v));
        }
        v
    }
}

static STRINGS: Pool<str> = Pool::new();
static FIELD_SETS: Pool<[Arc<str>]> = Pool::new();
static WRITERS: Pool<Writer> = Pool::new();

/// The one shared copy of `s` (past the pool's cap, a copy of its own).
pub fn shared(s: &str) -> Arc<str> {
    STRINGS.get(Arc::from(s))
}

/// Reads the summary of `metadata.managedFields`, newest entries kept when there are too many.
pub fn managed_summary(v: &Value) -> Box<[ManagedEntry]> {
    let Some(list) = v
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Box::default();
    };
    let mut out: Vec<ManagedEntry> = list
        .iter()
        .filter_map(|m| {
            let manager = opt_str(m, &["manager"]).filter(|s| !s.is_empty())?;
            let writer = Writer {
                manager: shared(&manager),
                operation: shared(&opt_str(m, &["operation"]).unwrap_or_default()),
                subresource: opt_str(m, &["subresource"])
                    .filter(|s| !s.is_empty())
                    .map(|s| shared(&s)),
                fields: FIELD_SETS.get(owned_fields(m.get("fieldsV1")).into()),
            };
            Some(ManagedEntry {
                writer: WRITERS.get(Arc::new(writer)),
                time: time_at(m, &["time"]).known().copied(),
            })
        })
        .collect();
    if out.len() > MANAGERS_PER_OBJECT {
        out.sort_by_key(|e| std::cmp::Reverse(e.time));
        out.truncate(MANAGERS_PER_OBJECT);
    }
    out.into_boxed_slice()
}

/// The owned fields of a FieldsV1 tree to two levels: `{"f:spec": {"f:plugins": {}}}` ->
/// `spec.plugins`; a top-level field owned whole (or only through list items and map keys)
/// is named alone.
fn owned_fields(tree: Option<&Value>) -> Vec<Arc<str>> {
    let mut out: Vec<Arc<str>> = Vec::new();
    let Some(top) = tree.and_then(Value::as_object) else {
        return out;
    };
    for (k, sub) in top {
        let Some(name) = k.strip_prefix("f:") else {
            continue;
        };
        let children: Vec<&str> = sub
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
            .filter_map(|c| c.strip_prefix("f:"))
            .collect();
        if children.is_empty() {
            out.push(shared(name));
        } else {
            out.extend(children.iter().map(|c| shared(&format!("{name}.{c}"))));
        }
    }
    if out.len() > FIELDS_PER_MANAGER {
        let more = out.len() - FIELDS_PER_MANAGER + 1;
        out.truncate(FIELDS_PER_MANAGER - 1);
        out.push(shared(&format!("+{more} more")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn managed_fields_are_summarised_to_two_levels() {
        let v = json!({"metadata": {"managedFields": [
            {"manager": "helm-controller", "operation": "Apply", "time": "2026-01-01T00:00:03Z",
             "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:plugins": {}, "f:instances": {}}}},
            {"manager": "manager", "operation": "Update", "subresource": "status",
             "time": "2026-01-01T00:00:12Z", "fieldsV1": {"f:status": {}}},
            {"operation": "Update"}
        ]}});
        let m = managed_summary(&v);
        assert_eq!(m.len(), 2, "an entry without a manager is not kept");
        let fields: Vec<&str> = m[0].fields.iter().map(|f| &**f).collect();
        assert_eq!(
            fields,
            ["metadata.labels", "spec.instances", "spec.plugins"]
        );
        assert_eq!(&*m[0].operation, "Apply");
        assert_eq!(m[1].subresource.as_deref(), Some("status"));
        assert!(m[0].owns("spec.plugins[0].parameters.serverName"));
        assert!(!m[0].owns("spec.pluginsX"));
        assert!(m[1].owns("status.phase"));
        assert!(!m[1].owns("spec.instances"));
        // The same summary read again shares its strings and field set.
        let again = managed_summary(&v);
        assert!(Arc::ptr_eq(&m[0].fields, &again[0].fields));
        assert!(Arc::ptr_eq(&m[0].manager, &again[0].manager));
        assert!(Arc::ptr_eq(&m[0].writer, &again[0].writer));
    }
}
