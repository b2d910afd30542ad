//! What a real API server does on create, update, patch and delete: defaults, immutable
//! metadata, optimistic concurrency, the status subresource split, finalizers.

use serde_json::{Value, json};

use crate::model::Kind;
use crate::sim::clock::now_rfc3339;
use crate::sim::managed::{self, Writer};
use crate::sim::patch::{self, PatchKind};
use crate::sim::schema;
use crate::sim::status::{ApiError, success_status};
use crate::sim::store::{ObjKey, Store, Txn};

/// Which part of an object a write addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Main,
    Status,
}

/// `DeleteOptions` fields the emulator honours.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    /// `Orphan`, `Foreground` or `Background` (the default).
    pub propagation: Option<Propagation>,
}

/// What happens to the dependents of a deleted object (its `propagationPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    Background,
    Foreground,
    Orphan,
}

impl Propagation {
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        match s {
            "Background" => Ok(Propagation::Background),
            "Foreground" => Ok(Propagation::Foreground),
            "Orphan" => Ok(Propagation::Orphan),
            other => Err(ApiError::bad_request(format!(
                "propagationPolicy: Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
            ))),
        }
    }

    /// The finalizer the garbage collector finishes this delete with.
    fn finalizer(self) -> Option<&'static str> {
        match self {
            Propagation::Background => None,
            Propagation::Foreground => Some("foregroundDeletion"),
            Propagation::Orphan => Some("orphan"),
        }
    }
}

impl DeleteOptions {
    pub fn from_body(body: &[u8]) -> Result<Self, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self::default());
        }
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?;
        let s = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
        Ok(DeleteOptions {
            uid: s("/preconditions/uid"),
            resource_version: s("/preconditions/resourceVersion"),
            propagation: s("/propagationPolicy")
                .map(|p| Propagation::parse(&p))
                .transpose()?,
        })
    }
}

/// What a delete did, and what the server answers.
#[derive(Debug, Clone)]
pub enum Deleted {
    /// Removed; the body a real server answers (the object or a `Status` Success).
    Gone(Value),
    /// Finalizers hold it: `deletionTimestamp` is set, the object is still there.
    Pending(Value),
}

impl Deleted {
    pub fn body(&self) -> &Value {
        match self {
            Deleted::Gone(v) | Deleted::Pending(v) => v,
        }
    }
}

/// CRDs and most non-core kinds carry `metadata.generation`; core kinds here do not.
pub fn has_generation(kind: Kind) -> bool {
    !patch::is_builtin(kind)
}

pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub(crate) fn meta_mut(obj: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    match obj.get_mut("metadata") {
        Some(Value::Object(m)) => m,
        _ => unreachable!("metadata was just made an object"),
    }
}

/// Everything but metadata and status: a change here bumps `generation`.
fn spec_part(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

fn finalizers_empty(obj: &Value) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

fn without_rv(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
    }
    v
}

/// Commits `result` over `current`: removes the object when it is being deleted and its last
/// finalizer just went, skips no-op writes (a real server does not bump the version for them).
pub(crate) fn finish_write(
    txn: &mut Txn,
    kind: Kind,
    key: &ObjKey,
    current: &Value,
    result: Value,
) -> Value {
    if !meta_str(&result, "deletionTimestamp").is_empty() && finalizers_empty(&result) {
        // The stored object's last state goes out with the DELETED event.
        txn.commit(kind, key, Some(result));
        return txn.commit(kind, key, None);
    }
    if without_rv(&result) == without_rv(current) {
        return current.clone();
    }
    txn.commit(kind, key, Some(result))
}

fn type_meta(kind: Kind, obj: &mut Value) {
    let info = kind.info();
    obj["apiVersion"] = json!(info.api_version());
    obj["kind"] = json!(info.api_kind);
}

fn defaults_on_create(kind: Kind, obj: &mut Value) {
    let add_finalizer = |obj: &mut Value, f: &str| {
        let m = meta_mut(obj);
        let list = m.entry("finalizers").or_insert_with(|| json!([]));
        if let Some(a) = list.as_array_mut()
            && !a.iter().any(|x| x == f)
        {
            a.push(json!(f));
        }
    };
    match kind {
        Kind::PersistentVolumeClaim => {
            add_finalizer(obj, "kubernetes.io/pvc-protection");
            if obj.pointer("/spec/volumeMode").is_none()
                && obj.get("spec").is_some_and(Value::is_object)
            {
                obj["spec"]["volumeMode"] = json!("Filesystem");
            }
            obj["status"] = json!({"phase": "Pending"});
        }
        Kind::PersistentVolume => {
            add_finalizer(obj, "kubernetes.io/pv-protection");
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                spec.entry("persistentVolumeReclaimPolicy")
                    .or_insert_with(|| json!("Retain"));
                spec.entry("volumeMode")
                    .or_insert_with(|| json!("Filesystem"));
            }
            obj["status"] = json!({"phase": "Pending"});
        }
        Kind::Namespace => {
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
            obj["status"] = json!({"phase": "Active"});
        }
        _ => {}
    }
}

pub(crate) fn check_body_type(kind: Kind, obj: &Value) -> Result<(), ApiError> {
    let info = kind.info();
    if let Some(k) = obj.get("kind").and_then(Value::as_str)
        && !k.is_empty()
        && k != info.api_kind
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({k}) does not match the expected kind ({})",
            info.api_kind
        )));
    }
    if let Some(av) = obj.get("apiVersion").and_then(Value::as_str)
        && !av.is_empty()
        && av != info.api_version()
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({})",
            info.api_version()
        )));
    }
    Ok(())
}

pub(crate) fn require_object(body: &Value) -> Result<(), ApiError> {
    if body.is_object() {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "Object 'Kind' is missing in the request body: expected a JSON object",
        ))
    }
}

impl Store {
    pub fn api_create(
        &self,
        kind: Kind,
        namespace: &str,
        mut obj: Value,
        writer: &Writer,
    ) -> Result<Value, ApiError> {
        let info = kind.info();
        require_object(&obj)?;
        check_body_type(kind, &obj)?;
        if !meta_str(&obj, "resourceVersion").is_empty() {
            return Err(ApiError::rv_on_create());
        }
        let body_ns = meta_str(&obj, "namespace").to_string();
        if info.namespaced && !body_ns.is_empty() && body_ns != namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        self.transact(|txn| {
            let mut name = meta_str(&obj, "name").to_string();
            if name.is_empty() {
                let prefix = meta_str(&obj, "generateName").to_string();
                if prefix.is_empty() {
                    return Err(ApiError::invalid(
                        info,
                        "",
                        &[(
                            "metadata.name".into(),
                            "Required value: name or generateName is required".into(),
                        )],
                    ));
                }
                name = format!("{prefix}{}", txn.name_suffix());
            }
            if info.namespaced
                && kind != Kind::Namespace
                && txn
                    .get(Kind::Namespace, &(String::new(), namespace.to_string()))
                    .is_none()
            {
                return Err(ApiError::namespace_not_found(namespace));
            }
            let ns = if info.namespaced {
                namespace.to_string()
            } else {
                String::new()
            };
            let key = (ns.clone(), name.clone());
            if txn.get(kind, &key).is_some() {
                return Err(ApiError::already_exists(info, &name));
            }
            type_meta(kind, &mut obj);
            let uid = txn.new_uid();
            let m = meta_mut(&mut obj);
            m.insert("name".into(), json!(name));
            if info.namespaced {
                m.insert("namespace".into(), json!(ns));
            } else {
                m.remove("namespace");
            }
            m.insert("uid".into(), json!(uid));
            m.insert("creationTimestamp".into(), json!(now_rfc3339()));
            m.remove("deletionTimestamp");
            m.remove("deletionGracePeriodSeconds");
            m.remove("managedFields");
            if has_generation(kind) {
                m.insert("generation".into(), json!(1));
            } else {
                m.remove("generation");
            }
            if info.status_subresource
                && let Some(o) = obj.as_object_mut()
            {
                o.remove("status");
            }
            defaults_on_create(kind, &mut obj);
            schema::validate(kind, &obj)?;
            // The status a server sets itself (PVC Pending) is nobody's write.
            let status = info
                .status_subresource
                .then(|| obj.as_object_mut().and_then(|o| o.remove("status")))
                .flatten();
            managed::record(&Value::Null, &mut obj, writer, None, &now_rfc3339());
            if let Some(s) = status {
                obj["status"] = s;
            }
            Ok(txn.commit(kind, &key, Some(obj)))
        })
    }

    /// PUT of the main resource or of `/status`.
    pub fn api_update(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        body: Value,
        part: Part,
        writer: &Writer,
    ) -> Result<Value, ApiError> {
        require_object(&body)?;
        check_body_type(kind, &body)?;
        let body_name = meta_str(&body, "name");
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let rv = meta_str(&body, "resourceVersion").to_string();
        self.write_over(kind, namespace, name, part, &rv, body, writer)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn api_patch(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        pk: PatchKind,
        body: &[u8],
        part: Part,
        writer: &Writer,
    ) -> Result<Value, ApiError> {
        // The patch applies to the object as stored now; a resourceVersion it carries is a
        // precondition, as with a real server.
        let info = kind.info();
        let key = key_for(kind, namespace, name);
        loop {
            let Some(current) = self.transact(|t| t.get(kind, &key).cloned()) else {
                return Err(ApiError::not_found(info, name));
            };
            let patched = patch::apply(kind, &current, pk, body)?;
            if !patched.is_object() {
                return Err(ApiError::patch_invalid());
            }
            let current_rv = meta_str(&current, "resourceVersion").to_string();
            let wanted_rv = meta_str(&patched, "resourceVersion").to_string();
            let precondition = if wanted_rv != current_rv {
                wanted_rv
            } else {
                current_rv.clone()
            };
            match self.write_over(kind, namespace, name, part, &precondition, patched, writer) {
                // The object moved between our read and write, not the client's view: redo.
                Err(e)
                    if e.code == 409
                        && precondition == current_rv
                        && self.moved(kind, &key, &current_rv) =>
                {
                    continue;
                }
                other => return other,
            }
        }
    }

    fn moved(&self, kind: Kind, key: &ObjKey, rv: &str) -> bool {
        self.transact(|t| {
            t.get(kind, key)
                .is_some_and(|o| meta_str(o, "resourceVersion") != rv)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn write_over(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        part: Part,
        precondition_rv: &str,
        body: Value,
        writer: &Writer,
    ) -> Result<Value, ApiError> {
        let key = key_for(kind, namespace, name);
        self.transact(|txn| write_in(txn, kind, &key, part, precondition_rv, body, Some(writer)))
    }
}

/// A write over the stored object: optimistic concurrency, immutable metadata, the status
/// split, generation, schema, managedFields (recorded as `writer`'s, or as given when `None`).
pub(crate) fn write_in(
    txn: &mut Txn,
    kind: Kind,
    key: &ObjKey,
    part: Part,
    precondition_rv: &str,
    body: Value,
    writer: Option<&Writer>,
) -> Result<Value, ApiError> {
    let info = kind.info();
    let name = key.1.as_str();
    let Some(current) = txn.get(kind, key).cloned() else {
        return Err(ApiError::not_found(info, name));
    };
    if !precondition_rv.is_empty() && precondition_rv != meta_str(&current, "resourceVersion") {
        return Err(ApiError::conflict_modified(info, name));
    }
    let mut result = match part {
        Part::Status => {
            let mut r = current.clone();
            match body.get("status") {
                Some(s) => r["status"] = s.clone(),
                None => {
                    if let Some(o) = r.as_object_mut() {
                        o.remove("status");
                    }
                }
            }
            r
        }
        Part::Main => {
            let mut r = body;
            type_meta(kind, &mut r);
            let m = meta_mut(&mut r);
            for f in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "namespace",
                "name",
                "generation",
            ] {
                match current.pointer(&format!("/metadata/{f}")) {
                    Some(v) => m.insert(f.into(), v.clone()),
                    None => m.remove(f),
                };
            }
            if info.status_subresource {
                match current.get("status") {
                    Some(s) => r["status"] = s.clone(),
                    None => {
                        if let Some(o) = r.as_object_mut() {
                            o.remove("status");
                        }
                    }
                }
            }
            r
        }
    };
    if has_generation(kind) && spec_part(&result) != spec_part(&current) {
        let g = current
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta_mut(&mut result).insert("generation".into(), json!(g + 1));
    }
    schema::validate_update(kind, &current, &result)?;
    let subresource = (part == Part::Status).then_some("status");
    if let Some(w) = writer {
        managed::record(&current, &mut result, w, subresource, &now_rfc3339());
    }
    Ok(finish_write(txn, kind, key, &current, result))
}

impl Store {
    pub fn api_delete(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        let info = kind.info();
        let key = key_for(kind, namespace, name);
        self.transact(|txn| {
            let Some(current) = txn.get(kind, &key).cloned() else {
                return Err(ApiError::not_found(info, name));
            };
            let uid = meta_str(&current, "uid");
            if let Some(want) = &opts.uid
                && want != uid
            {
                return Err(ApiError::uid_precondition(info, name, want, uid));
            }
            let rv = meta_str(&current, "resourceVersion");
            if let Some(want) = &opts.resource_version
                && want != rv
            {
                return Err(ApiError::rv_precondition(info, name, want, rv));
            }
            Ok(delete_with(
                txn,
                kind,
                &key,
                current,
                false,
                opts.propagation,
            ))
        })
    }
}

pub(crate) fn key_for(kind: Kind, namespace: &str, name: &str) -> ObjKey {
    let ns = if kind.info().namespaced {
        namespace
    } else {
        ""
    };
    (ns.to_string(), name.to_string())
}

/// Deletion with finalizers honoured (unless `force`): the body a real server answers.
pub(crate) fn delete_in(
    txn: &mut Txn,
    kind: Kind,
    key: &ObjKey,
    current: Value,
    force: bool,
) -> Deleted {
    delete_with(txn, kind, key, current, force, None)
}

/// `delete_in` with a propagation policy: `Orphan` and `Foreground` add the finalizer the
/// garbage collector finishes them with, so the object waits for it.
pub(crate) fn delete_with(
    txn: &mut Txn,
    kind: Kind,
    key: &ObjKey,
    mut current: Value,
    force: bool,
    propagation: Option<Propagation>,
) -> Deleted {
    if !force
        && meta_str(&current, "deletionTimestamp").is_empty()
        && let Some(f) = propagation.and_then(Propagation::finalizer)
    {
        let m = meta_mut(&mut current);
        let list = m.entry("finalizers").or_insert_with(|| json!([]));
        if let Some(a) = list.as_array_mut()
            && !a.iter().any(|x| x == f)
        {
            a.push(json!(f));
        }
    }
    if !force && !finalizers_empty(&current) {
        if !meta_str(&current, "deletionTimestamp").is_empty() {
            return Deleted::Pending(current);
        }
        let mut next = current.clone();
        let m = meta_mut(&mut next);
        m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
        m.insert("deletionGracePeriodSeconds".into(), json!(0));
        return Deleted::Pending(txn.commit(kind, key, Some(next)));
    }
    let last = txn.commit(kind, key, None);
    // Core kinds (but pods) answer a Status; CRDs and pods answer the deleted object.
    if patch::is_builtin(kind) && kind != Kind::Pod {
        Deleted::Gone(success_status(kind.info(), &key.1, meta_str(&last, "uid")))
    } else {
        Deleted::Gone(last)
    }
}
