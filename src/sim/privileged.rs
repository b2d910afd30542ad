//! Writes that bypass API semantics, for scenarios, `--load` and tests: objects keep the uid,
//! timestamps and status they are given, so files can reference each other by uid and replay a
//! real cluster's state exactly.

use serde_json::{Value, json};

use crate::model::Kind;
use crate::sim::api_ops::{Deleted, delete_in, finish_write, key_for, meta_str};
use crate::sim::clock::now_rfc3339;
use crate::sim::patch::{self, PatchKind};
use crate::sim::status::ApiError;
use crate::sim::store::{Store, key_of};

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

    fn put_with(&self, mut obj: Value, keep_rv: bool) -> Result<Value, ApiError> {
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
        self.transact(|txn| {
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
            let key = key_of(&obj);
            let stored = txn.commit(kind, &key, Some(obj));
            if keep_rv && let Ok(n) = given_rv.parse::<u64>() {
                txn.advance_rv(n);
                let mut kept = stored;
                kept["metadata"]["resourceVersion"] = json!(given_rv);
                // Rewrite in place without a second event: the dump's version is the truth.
                return Ok(txn.replace_silently(kind, &key, kept));
            }
            Ok(stored)
        })
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
        let key = key_for(kind, namespace, name);
        self.transact(|txn| {
            let Some(current) = txn.get(kind, &key).cloned() else {
                return Err(ApiError::not_found(kind.info(), name));
            };
            Ok(delete_in(txn, kind, &key, current, force))
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
