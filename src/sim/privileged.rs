//! Writes that bypass API semantics, for scenarios, `--load` and tests: objects keep the uid,
//! timestamps and status they are given, so files can reference each other by uid and replay a
//! real cluster's state exactly.

use serde_json::{Value, json};

use crate::model::Kind;
use crate::sim::api_ops::{Deleted, Propagation, delete_with, finish_write, key_for, meta_str};
use crate::sim::clock::now_rfc3339;
use crate::sim::managed::{self, Writer};
use crate::sim::patch::{self, PatchKind};
use crate::sim::status::ApiError;
use crate::sim::store::{Store, Txn, key_of};

/// The registered kind of a manifest, from its `apiVersion` and `kind`.
pub fn kind_of(obj: &Value) -> Result<Kind, ApiError> {
    let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let k = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    Kind::from_api(av, k).ok_or_else(|| {
        ApiError::bad_request(format!(
            "kind {k:?} of {av:?} is not served by the emulator"
        ))
    })
}

/// Creates the namespace an object is written into when it does not exist: a dump or a
/// scenario rarely lists its Namespaces, a real cluster always has them.
fn ensure_namespace(txn: &mut Txn, ns: &str) {
    let key = (String::new(), ns.to_string());
    if ns.is_empty() || txn.get(Kind::Namespace, &key).is_some() {
        return;
    }
    let obj = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": ns,
            "uid": txn.new_uid(),
            "creationTimestamp": now_rfc3339(),
            "labels": {"kubernetes.io/metadata.name": ns},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    });
    txn.commit(Kind::Namespace, &key, Some(obj));
}

fn put_in(
    txn: &mut Txn,
    mut obj: Value,
    keep_rv: bool,
    writer: Option<&Writer>,
) -> Result<Value, ApiError> {
    let kind = kind_of(&obj)?;
    let info = kind.info();
    if !obj.get("metadata").is_some_and(Value::is_object) {
        return Err(ApiError::bad_request("object has no metadata"));
    }
    if !info.namespaced
        && let Some(m) = obj["metadata"].as_object_mut()
    {
        m.remove("namespace");
    }
    if info.namespaced && meta_str(&obj, "namespace").is_empty() {
        obj["metadata"]["namespace"] = json!("default");
    }
    let given_rv = meta_str(&obj, "resourceVersion").to_string();
    if meta_str(&obj, "name").is_empty() {
        let prefix = meta_str(&obj, "generateName").to_string();
        if prefix.is_empty() {
            return Err(ApiError::bad_request(
                "object has neither name nor generateName",
            ));
        }
        let suffix = txn.name_suffix();
        obj["metadata"]["name"] = json!(format!("{prefix}{suffix}"));
    }
    if meta_str(&obj, "uid").is_empty() {
        obj["metadata"]["uid"] = json!(txn.new_uid());
    }
    if meta_str(&obj, "creationTimestamp").is_empty() {
        obj["metadata"]["creationTimestamp"] = json!(now_rfc3339());
    }
    if info.namespaced {
        ensure_namespace(txn, meta_str(&obj, "namespace"));
    }
    let key = key_of(&obj);
    if let Some(w) = writer {
        // A replacement of the same object is a write over it; anything else is new.
        let previous = txn
            .get(kind, &key)
            .filter(|p| meta_str(p, "uid") == meta_str(&obj, "uid"))
            .cloned()
            .unwrap_or(Value::Null);
        managed::record(&previous, &mut obj, w, None, &now_rfc3339());
    }
    let stored = txn.commit(kind, &key, Some(obj));
    if keep_rv && let Ok(n) = given_rv.parse::<u64>() {
        txn.advance_rv(n);
        let mut kept = stored;
        kept["metadata"]["resourceVersion"] = json!(given_rv);
        // Rewrite in place without a second event: the dump's version is the truth.
        return Ok(txn.replace_silently(kind, &key, kept));
    }
    Ok(stored)
}

impl Store {
    /// Creates or replaces an object as given. Missing `uid` and `creationTimestamp` are filled;
    /// the resourceVersion is assigned by the store.
    pub fn put(&self, obj: Value) -> Result<Value, ApiError> {
        self.put_with(obj, false)
    }

    /// Like `put`, but a numeric `metadata.resourceVersion` is kept and the global counter moved
    /// past it (loading a dump of a real cluster).
    pub fn load(&self, obj: Value) -> Result<Value, ApiError> {
        self.put_with(obj, true)
    }

    fn put_with(&self, obj: Value, keep_rv: bool) -> Result<Value, ApiError> {
        self.transact(|txn| put_in(txn, obj, keep_rv, None))
    }

    /// `put` of several objects at once: nobody (no client, no controller) sees a state in
    /// which some of them are written and others not, so they may refer to each other in any
    /// order (a dependent listed before its owner is not collected).
    pub fn put_all(&self, objs: Vec<Value>) -> Vec<Result<Value, ApiError>> {
        self.transact(|txn| {
            objs.into_iter()
                .map(|o| put_in(txn, o, false, None))
                .collect()
        })
    }

    /// `load` of several objects at once (see `put_all`).
    pub fn load_all(&self, objs: Vec<Value>) -> Vec<Result<Value, ApiError>> {
        self.transact(|txn| {
            objs.into_iter()
                .map(|o| put_in(txn, o, true, None))
                .collect()
        })
    }

    /// `put` recorded in managedFields as `writer`'s write (a scenario step with a
    /// `fieldManager`).
    pub fn put_as(&self, obj: Value, writer: &Writer) -> Result<Value, ApiError> {
        self.transact(|txn| put_in(txn, obj, false, Some(writer)))
    }

    /// Patches the whole object, status included. Finalizer semantics still apply: removing the
    /// last finalizer of an object being deleted removes it.
    pub fn patch_object(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        pk: PatchKind,
        patch_body: &Value,
    ) -> Result<Value, ApiError> {
        self.patch_object_as(kind, namespace, name, pk, patch_body, None, None)
    }

    /// `patch_object` recorded in managedFields as `writer`'s write, on `subresource`
    /// (`Some("status")` for a status write).
    #[allow(clippy::too_many_arguments)]
    pub fn patch_object_as(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        pk: PatchKind,
        patch_body: &Value,
        writer: Option<&Writer>,
        subresource: Option<&str>,
    ) -> Result<Value, ApiError> {
        let key = key_for(kind, namespace, name);
        let body = patch_body.to_string();
        self.transact(|txn| {
            let Some(current) = txn.get(kind, &key).cloned() else {
                return Err(ApiError::not_found(kind.info(), name));
            };
            // Strategic merge is refused for CRDs over HTTP; privileged callers get a merge.
            let pk = if pk == PatchKind::Strategic && !patch::is_builtin(kind) {
                PatchKind::Merge
            } else {
                pk
            };
            let mut result = patch::apply(kind, &current, pk, body.as_bytes())?;
            result["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
            if let Some(w) = writer {
                managed::record(&current, &mut result, w, subresource, &now_rfc3339());
            }
            Ok(finish_write(txn, kind, &key, &current, result))
        })
    }

    /// Merge-patches `.status` (what a controller's status update does).
    pub fn patch_status(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        status_patch: &Value,
    ) -> Result<Value, ApiError> {
        self.patch_object(
            kind,
            namespace,
            name,
            PatchKind::Merge,
            &json!({ "status": status_patch }),
        )
    }

    /// Deletes like a client would (finalizers set `deletionTimestamp`), or at once with `force`.
    pub fn remove(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        force: bool,
    ) -> Result<Deleted, ApiError> {
        self.remove_with(kind, namespace, name, force, None)
    }

    /// `remove` with a propagation policy (`Orphan` keeps the dependents, as a controller
    /// deleting a DataVolume but not its PVC asks).
    pub fn remove_with(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        force: bool,
        propagation: Option<Propagation>,
    ) -> Result<Deleted, ApiError> {
        let key = key_for(kind, namespace, name);
        self.transact(|txn| {
            let Some(current) = txn.get(kind, &key).cloned() else {
                return Err(ApiError::not_found(kind.info(), name));
            };
            Ok(delete_with(txn, kind, &key, current, force, propagation))
        })
    }

    /// Removes one finalizer if present (the controller manager's job for the protection
    /// finalizers). Returns whether something changed.
    pub fn remove_finalizer(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        finalizer: &str,
    ) -> bool {
        let key = key_for(kind, namespace, name);
        self.transact(|txn| {
            let Some(current) = txn.get(kind, &key).cloned() else {
                return false;
            };
            let mut next = current.clone();
            let Some(list) = next
                .pointer_mut("/metadata/finalizers")
                .and_then(Value::as_array_mut)
            else {
                return false;
            };
            let before = list.len();
            list.retain(|f| f != finalizer);
            if list.len() == before {
                return false;
            }
            finish_write(txn, kind, &key, &current, next);
            true
        })
    }
}
