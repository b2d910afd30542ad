//! The Velero objects of one namespace's restores, read where they live (Velero's namespace)
//! and by label only, so that a view scoped to one namespace (`check -n`, the dashboard's
//! `-n`, `preflight`) sees its restores' Velero side without reading anyone else's:
//!
//! - Velero Restores carry the RestoreJob's namespace as a label
//!   (`backups.cozystack.io/owned-by.BackupJobNamespace`, set by the controller);
//! - DataDownloads carry their Restore's UID (`velero.io/restore-uid`, set by Velero; its
//!   `restore-name` label is shortened for long names, the UID never is), so they are selected
//!   by the UIDs of the Restores just read.
//!
//! Velero objects only ever live in `VELERO_NAMESPACE`: every read of them, scoped or not, is
//! in that namespace, so RBAC grants them there alone (deploy/kubernetes/base/velero-rbac.yaml).

use crate::model::Kind;
use crate::model::names::{LABEL_OWNED_BY_NAMESPACE, LABEL_VELERO_RESTORE_UID, VELERO_NAMESPACE};
use crate::model::snapshot::Snapshot;
use std::collections::BTreeSet;

/// The API group of every Velero kind.
pub const VELERO_GROUP: &str = "velero.io";

/// How many UIDs one DataDownload selector names: a few restores per namespace is usual; a
/// long selector is split into several lists rather than one URL of any length.
pub const UIDS_PER_SELECTOR: usize = 50;

/// The namespace a kind is read in, and the label selector, for a view scoped to `scope`
/// (`None`: every namespace). DataDownloads scoped to a namespace need their Restores' UIDs
/// first (`downloads_selectors`): `None` selector here, and the caller asks for those.
pub fn read_in(kind: Kind, scope: Option<&str>) -> ReadIn {
    match (kind, scope) {
        (Kind::VeleroRestore, Some(ns)) => ReadIn {
            namespace: Some(VELERO_NAMESPACE.to_string()),
            labels: Some(restores_selector(ns)),
        },
        // Any Velero kind (Restores, DataDownloads, and Backups where they are read) lives in
        // Velero's namespace only. One without a label tying it to a namespace's restores is
        // read there whole: seeing none of it would read as "missing".
        (k, _) if k.info().group == VELERO_GROUP => ReadIn {
            namespace: Some(VELERO_NAMESPACE.to_string()),
            labels: None,
        },
        (_, ns) => ReadIn {
            namespace: ns.map(str::to_string),
            labels: None,
        },
    }
}

/// Where and how one kind is listed or watched.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadIn {
    /// `None`: every namespace (or a cluster-scoped kind).
    pub namespace: Option<String>,
    pub labels: Option<String>,
}

/// Whether a kind, in a view scoped to a namespace, is read by the UIDs of that namespace's
/// Velero Restores.
pub fn by_restore_uids(kind: Kind, scope: Option<&str>) -> bool {
    kind == Kind::DataDownload && scope.is_some()
}

/// The Velero Restores the controller made for RestoreJobs of namespace `ns`.
pub fn restores_selector(ns: &str) -> String {
    format!("{LABEL_OWNED_BY_NAMESPACE}={ns}")
}

/// The Velero Restores that carry no RestoreJob-namespace label (made by hand, or relabelled):
/// the analysis still attributes one by its name (`<ns>.<RestoreJob>-…`, the controller's
/// generateName), so a scoped read takes those named for its namespace (`named_for`).
pub fn unlabelled_restores() -> ReadIn {
    ReadIn {
        namespace: Some(VELERO_NAMESPACE.to_string()),
        labels: Some(format!("!{LABEL_OWNED_BY_NAMESPACE}")),
    }
}

/// Whether an unlabelled Velero Restore's name is one the controller gives namespace `ns`'s.
pub fn named_for(restore_name: &str, ns: &str) -> bool {
    restore_name
        .strip_prefix(ns)
        .is_some_and(|rest| rest.starts_with('.'))
}

/// The DataDownloads of the Restores with these UIDs, a selector per `UIDS_PER_SELECTOR`;
/// none for no Restore (then there is no DataDownload of theirs either).
pub fn downloads_selectors(uids: &BTreeSet<String>) -> Vec<String> {
    let uids: Vec<&str> = uids
        .iter()
        .map(String::as_str)
        .filter(|u| is_label_value(u))
        .collect();
    uids.chunks(UIDS_PER_SELECTOR)
        .map(|c| format!("{LABEL_VELERO_RESTORE_UID} in ({})", c.join(",")))
        .collect()
}

/// The UIDs of the Velero Restores a snapshot holds.
pub fn restore_uids(snap: &Snapshot) -> BTreeSet<String> {
    snap.velero_restores
        .iter()
        .map(|r| r.meta.uid.to_string())
        .filter(|u| !u.is_empty())
        .collect()
}

/// A UID the server gave can go into a selector as it is; anything else is left out rather
/// than break the selector.
fn is_label_value(v: &str) -> bool {
    !v.is_empty() && crate::model::k8s_names::label_value("UID", v).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unlabelled_restore_is_a_namespaces_by_its_generated_name_only() {
        assert!(named_for("tenant-a.restore-test-9xgxn", "tenant-a"));
        assert!(!named_for("tenant-ab.restore-test-9xgxn", "tenant-a"));
        assert!(!named_for("tenant-a", "tenant-a"));
        assert!(!named_for("other.tenant-a.x", "tenant-a"));
    }

    #[test]
    fn a_scoped_view_reads_velero_objects_in_velero_s_namespace_by_label() {
        let r = read_in(Kind::VeleroRestore, Some("tenant-a"));
        assert_eq!(r.namespace.as_deref(), Some("cozy-velero"));
        assert_eq!(
            r.labels.as_deref(),
            Some("backups.cozystack.io/owned-by.BackupJobNamespace=tenant-a")
        );
        assert!(by_restore_uids(Kind::DataDownload, Some("tenant-a")));
        assert!(!by_restore_uids(Kind::DataDownload, None));
        // Unscoped, still only Velero's namespace.
        let r = read_in(Kind::DataDownload, None);
        assert_eq!(r.namespace.as_deref(), Some("cozy-velero"));
        assert_eq!(r.labels, None);
        assert_eq!(
            read_in(Kind::PersistentVolumeClaim, None),
            ReadIn::default()
        );
    }

    #[test]
    fn downloads_are_selected_by_their_restores_uids_in_bounded_selectors() {
        assert!(downloads_selectors(&BTreeSet::new()).is_empty());
        let uids: BTreeSet<String> = (0..120).map(|i| format!("uid-{i:03}")).collect();
        let s = downloads_selectors(&uids);
        assert_eq!(s.len(), 3);
        assert!(s[0].starts_with("velero.io/restore-uid in (uid-000,uid-001,"));
        let broken: BTreeSet<String> = ["a b".to_string(), "ok".to_string()].into();
        assert_eq!(
            downloads_selectors(&broken),
            vec!["velero.io/restore-uid in (ok)".to_string()]
        );
    }
}
