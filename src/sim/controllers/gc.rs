//! The garbage collector, as kube-controller-manager runs it: an object whose every owner is
//! gone (no object of the owner's kind and name with the owner's uid) is deleted; one that
//! still has a live owner only loses its references to the gone ones. An owner of a kind the
//! emulator does not serve cannot be looked up and counts as present, as the real collector
//! leaves dependents of an unresolvable owner alone.
//!
//! Deletes with a propagation policy: `Orphan` puts the `orphan` finalizer on the owner; the
//! collector removes the owner's references from its dependents, then the finalizer.
//! `Foreground` puts `foregroundDeletion`; the collector deletes the dependents, then removes
//! the finalizer once none is left.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{deleting, has_finalizer, kcm_write};
use crate::model::Kind;
use crate::sim::api_ops::{delete_in, key_for, meta_str};
use crate::sim::store::{ObjKey, Store, Txn};

pub const ORPHAN: &str = "orphan";
pub const FOREGROUND: &str = "foregroundDeletion";

/// Whether the owner a reference names exists (with that uid). `None`: cannot tell (a kind
/// the emulator does not serve, a namespaced owner of a cluster-scoped object).
fn owner_present(txn: &Txn, dependent_ns: &str, r: &Value) -> Option<bool> {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
    let kind = Kind::from_api(s("apiVersion"), s("kind"))?;
    let ns = if kind.info().namespaced {
        if dependent_ns.is_empty() {
            return None;
        }
        dependent_ns
    } else {
        ""
    };
    let owner = txn.get(kind, &(ns.to_string(), s("name").to_string()));
    Some(owner.is_some_and(|o| meta_str(o, "uid") == s("uid")))
}

/// The references of `obj` whose owner is certainly gone, and whether any owner remains.
fn classify(txn: &Txn, obj: &Value) -> (Vec<String>, bool) {
    let ns = meta_str(obj, "namespace");
    let mut dangling = Vec::new();
    let mut solid = false;
    for r in obj
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match owner_present(txn, ns, r) {
            Some(false) => dangling.push(
                r.get("uid")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            ),
            _ => solid = true,
        }
    }
    (dangling, solid)
}

/// Whether the collector would delete `obj` now: it has owners and all of them are gone.
pub fn orphaned(txn: &Txn, obj: &Value) -> bool {
    let (dangling, solid) = classify(txn, obj);
    !dangling.is_empty() && !solid
}

fn without_refs_to(obj: &Value, uids: &HashSet<&str>) -> Value {
    let mut next = obj.clone();
    if let Some(list) = next
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)
    {
        list.retain(|r| {
            !r.get("uid")
                .and_then(Value::as_str)
                .is_some_and(|u| uids.contains(u))
        });
        if list.is_empty()
            && let Some(m) = next.get_mut("metadata").and_then(Value::as_object_mut)
        {
            m.remove("ownerReferences");
        }
    }
    next
}

fn remove_finalizer(txn: &mut Txn, kind: Kind, key: &ObjKey, current: &Value, f: &str) {
    let mut next = current.clone();
    if let Some(list) = next
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        list.retain(|x| x != f);
    }
    kcm_write(txn, kind, key, current, next, None);
}

/// An owner being deleted with a propagation policy: orphan or delete its dependents.
fn finish_owner(
    txn: &mut Txn,
    owners: &HashMap<String, HashSet<(Kind, ObjKey)>>,
    kind: Kind,
    key: &ObjKey,
    owner: &Value,
) {
    let uid = meta_str(owner, "uid").to_string();
    let deps: Vec<(Kind, ObjKey)> = owners
        .get(&uid)
        .map(|s| s.iter().cloned().collect())
        .unwrap_or_default();
    let mut left = false;
    for (dk, dkey) in deps {
        let Some(dep) = txn.get(dk, &dkey).cloned() else {
            continue;
        };
        if !super::owner_uids(&dep).any(|u| u == uid) {
            continue;
        }
        if has_finalizer(owner, ORPHAN) {
            let next = without_refs_to(&dep, &HashSet::from([uid.as_str()]));
            kcm_write(txn, dk, &dkey, &dep, next, None);
        } else {
            if !deleting(&dep) {
                delete_in(txn, dk, &dkey, dep, false);
            }
            left |= txn.get(dk, &dkey).is_some();
        }
    }
    if has_finalizer(owner, ORPHAN) {
        remove_finalizer(txn, kind, key, owner, ORPHAN);
    } else if !left {
        remove_finalizer(txn, kind, key, owner, FOREGROUND);
    }
}

/// One object, as stored now: an owner to finish, or a dependent to collect.
pub fn collect(
    store: &Store,
    owners: &HashMap<String, HashSet<(Kind, ObjKey)>>,
    kind: Kind,
    key: &ObjKey,
) {
    let key = key_for(kind, &key.0, &key.1);
    store.transact(|txn| {
        let Some(obj) = txn.get(kind, &key).cloned() else {
            return;
        };
        if deleting(&obj) && (has_finalizer(&obj, ORPHAN) || has_finalizer(&obj, FOREGROUND)) {
            finish_owner(txn, owners, kind, &key, &obj);
        }
        let Some(obj) = txn.get(kind, &key).cloned() else {
            return;
        };
        let (dangling, solid) = classify(txn, &obj);
        if dangling.is_empty() {
            return;
        }
        if !solid {
            if !deleting(&obj) {
                delete_in(txn, kind, &key, obj, false);
            }
        } else {
            let gone: HashSet<&str> = dangling.iter().map(String::as_str).collect();
            let next = without_refs_to(&obj, &gone);
            kcm_write(txn, kind, &key, &obj, next, None);
        }
    });
}

impl Store {
    /// The objects the garbage collector would delete now (`Kind namespace/name`): every
    /// owner they name is gone.
    pub fn orphans(&self) -> Vec<String> {
        self.transact(|txn| {
            Kind::all()
                .flat_map(|k| {
                    txn.objects(k)
                        .filter(|o| orphaned(txn, o))
                        .map(|o| {
                            format!("{k} {}/{}", meta_str(o, "namespace"), meta_str(o, "name"))
                        })
                        .collect::<Vec<_>>()
                })
                .collect()
        })
    }
}
