//! The history of one restore: the controller's Events, who wrote each object of its tree
//! (managedFields) and, live, each field change the watch saw, merged into one time-ordered,
//! bounded list. Report 003 was diagnosed from this alone: helm-controller writes the new
//! serverName, four seconds later cozystack-cnpg-backup-driver writes the old one back.

use super::ctx::Ctx;
use super::disks::Disk;
use super::report::ObjRef;
use crate::model::names::postgres_release;
use crate::model::{Kind, Meta, Obj};
use jiff::Timestamp;
use serde::{Serialize, Serializer};
use std::sync::Arc;

/// Entries kept per restore, the newest: enough for the minutes that matter.
pub const HISTORY_PER_RESTORE: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryEntry {
    /// `None` when the cluster gave no time (an Event without timestamps).
    pub time: Option<Timestamp>,
    pub object: ObjRef,
    #[serde(flatten)]
    pub what: HistoryWhat,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "camelCase")]
pub enum HistoryWhat {
    /// An Event about the RestoreJob.
    #[serde(rename_all = "camelCase")]
    Event {
        #[serde(rename = "type", serialize_with = "arc_str")]
        type_: Arc<str>,
        #[serde(serialize_with = "arc_str")]
        reason: Arc<str>,
        #[serde(serialize_with = "arc_str")]
        message: Arc<str>,
        count: i64,
    },
    /// A managedFields entry: `manager` last wrote the object at `time` and owns `fields`.
    #[serde(rename_all = "camelCase")]
    ManagedFields {
        #[serde(serialize_with = "arc_str")]
        manager: Arc<str>,
        #[serde(serialize_with = "arc_str")]
        operation: Arc<str>,
        #[serde(serialize_with = "opt_arc_str")]
        subresource: Option<Arc<str>>,
        #[serde(serialize_with = "arc_strs")]
        fields: Arc<[Arc<str>]>,
    },
    /// An object of the restore's tree the live watch saw deleted (`uid`), with its owners
    /// (`Kind/name uid`): a purge, or the garbage collector taking what a gone owner held.
    #[serde(rename_all = "camelCase")]
    Deleted { uid: String, owners: Vec<String> },
    /// A field the live watch saw change, with who wrote it where managedFields tell.
    #[serde(rename_all = "camelCase")]
    Change {
        #[serde(serialize_with = "arc_str")]
        path: Arc<str>,
        #[serde(serialize_with = "opt_arc_str")]
        from: Option<Arc<str>>,
        #[serde(serialize_with = "opt_arc_str")]
        to: Option<Arc<str>>,
        #[serde(serialize_with = "opt_arc_str")]
        manager: Option<Arc<str>>,
        #[serde(serialize_with = "opt_arc_str")]
        operation: Option<Arc<str>>,
    },
}

fn arc_str<S: Serializer>(v: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v)
}

fn opt_arc_str<S: Serializer>(v: &Option<Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_some(&**v),
        None => s.serialize_none(),
    }
}

fn arc_strs<S: Serializer>(v: &Arc<[Arc<str>]>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|x| &**x))
}

/// The objects of a restore's tree, each once, in tree order, and the names whose deletion
/// belongs to its history (its objects may be gone: a purged Cluster, a collected ObjectStore).
#[derive(Default)]
pub struct Tree<'a> {
    objects: Vec<(Kind, &'a Meta)>,
    /// `(kind, name, whole)`: `whole` false also takes `name-*` (a Cluster's PVCs, its
    /// `-recovery` ObjectStore).
    gone: Vec<(Kind, String, bool)>,
}

impl<'a> Tree<'a> {
    fn add<T>(&mut self, kind: Kind, o: Option<&'a Arc<Obj<T>>>) {
        if let Some(o) = o {
            let m = &o.meta;
            let seen = self
                .objects
                .iter()
                .any(|(k, x)| *k == kind && x.namespace == m.namespace && x.name == m.name);
            if !seen {
                self.objects.push((kind, m));
            }
        }
    }

    fn common(c: &Ctx<'a>) -> Self {
        let mut t = Tree::default();
        t.add(Kind::RestoreJob, Some(c.rj));
        t.add(Kind::Backup, c.backup);
        t
    }

    /// A VM restore: its VM, VMI and HelmReleases, each disk's chain and the Velero Restore.
    pub fn vm(c: &Ctx<'a>, disks: &[Disk<'a>]) -> Self {
        let mut t = Tree::common(c);
        let s = c.snap;
        if let Some(vm) = c.vm_name() {
            t.gone
                .push((Kind::VirtualMachineInstance, vm.clone(), true));
            t.add(Kind::VirtualMachine, s.vms.get(c.ns, &vm));
            t.add(Kind::VirtualMachineInstance, s.vmis.get(c.ns, &vm));
            t.add(Kind::HelmRelease, s.helm_releases.get(c.ns, &vm));
        }
        for d in disks {
            t.gone.push((Kind::DataVolume, d.name.clone(), true));
            t.gone
                .push((Kind::PersistentVolumeClaim, d.name.clone(), true));
            t.gone
                .push((Kind::PersistentVolumeClaim, d.orig_name.clone(), true));
            t.add(Kind::HelmRelease, s.helm_releases.get(c.ns, &d.name));
            t.add(Kind::DataVolume, d.dv);
            t.add(Kind::PersistentVolumeClaim, d.pvc);
            t.add(Kind::PersistentVolume, d.pv);
            t.add(Kind::PersistentVolumeClaim, d.orig);
            t.add(Kind::PersistentVolume, d.orig_pv);
            t.add(Kind::DataDownload, d.download);
        }
        t.add(Kind::VeleroRestore, c.velero);
        t
    }

    /// A Postgres restore: the app, its HelmRelease, the Cluster with its PVCs, the
    /// ObjectStores and the CNPG Backup restored from.
    pub fn postgres(c: &Ctx<'a>) -> Self {
        let mut t = Tree::common(c);
        let s = c.snap;
        if let Some(app) = c.app() {
            let cl = postgres_release(app);
            t.gone.push((Kind::CnpgCluster, cl.clone(), true));
            t.gone.push((Kind::ObjectStore, cl.clone(), false));
            t.gone
                .push((Kind::PersistentVolumeClaim, cl.clone(), false));
            t.add(Kind::Postgres, s.postgreses.get(c.ns, app));
            t.add(Kind::HelmRelease, s.helm_releases.get(c.ns, &cl));
            t.add(Kind::CnpgCluster, s.clusters.get(c.ns, &cl));
            for os in s.object_stores.in_namespace(c.ns) {
                if os.meta.name == cl || os.meta.name.starts_with(&format!("{cl}-")) {
                    t.add(Kind::ObjectStore, Some(os));
                }
            }
            for p in s.pvcs.in_namespace(c.ns) {
                if p.meta.label("cnpg.io/cluster") == Some(cl.as_str()) {
                    t.add(Kind::PersistentVolumeClaim, Some(p));
                }
            }
        }
        if let Some(name) = c
            .backup
            .and_then(|b| b.driver_metadata.get("cnpg.io/backup-name"))
        {
            t.add(Kind::CnpgBackup, s.cnpg_backups.get(c.ns, name));
        }
        t
    }
}

/// Merges the restore's Events and its tree's managedFields and watched changes, oldest first,
/// the newest `HISTORY_PER_RESTORE` kept.
pub fn collect(c: &Ctx, tree: &Tree) -> Vec<HistoryEntry> {
    // Each entry with the instant it is ordered by: see `order_time`.
    let mut out: Vec<(Option<Timestamp>, HistoryEntry)> = Vec::new();
    let rj = c.rj_ref();
    for e in &c.events {
        out.push((
            order_time(e.last),
            HistoryEntry {
                time: e.last,
                object: rj.clone(),
                what: HistoryWhat::Event {
                    type_: e.type_.clone().unwrap_or_default(),
                    reason: e.reason.clone().unwrap_or_default(),
                    message: e.message.clone().unwrap_or_default(),
                    count: e.count.unwrap_or(1),
                },
            },
        ));
    }
    for (kind, m) in &tree.objects {
        let object = ObjRef::new(*kind, &m.namespace, &m.name);
        for e in &m.managed {
            // The write this entry records, when the watch saw it: its precise instant.
            let seen = m.changes.iter().find(|ch| {
                ch.manager.as_ref() == Some(&e.manager)
                    && ch.operation.as_ref() == Some(&e.operation)
                    && e.time.map(|t| t.as_second()) == Some(ch.time.as_second())
            });
            let at = seen.map_or_else(|| order_time(e.time), |ch| Some(ch.time));
            out.push((
                at,
                HistoryEntry {
                    time: e.time,
                    object: object.clone(),
                    what: HistoryWhat::ManagedFields {
                        manager: Arc::clone(&e.manager),
                        operation: Arc::clone(&e.operation),
                        subresource: e.subresource.clone(),
                        fields: Arc::clone(&e.fields),
                    },
                },
            ));
        }
        for ch in &m.changes {
            out.push((
                Some(ch.time),
                HistoryEntry {
                    time: Some(ch.time),
                    object: object.clone(),
                    what: HistoryWhat::Change {
                        path: Arc::clone(&ch.path),
                        from: ch.before.clone(),
                        to: ch.after.clone(),
                        manager: ch.manager.clone(),
                        operation: ch.operation.clone(),
                    },
                },
            ));
        }
    }
    for d in c.snap.tombstones.iter() {
        let ours = d.key.namespace == c.ns
            && tree.gone.iter().any(|(k, n, whole)| {
                *k == d.kind
                    && (d.key.name == *n
                        || (!whole
                            && d.key
                                .name
                                .strip_prefix(n.as_str())
                                .is_some_and(|r| r.starts_with('-'))))
            });
        if ours {
            out.push((
                Some(d.at),
                HistoryEntry {
                    time: Some(d.at),
                    object: ObjRef::new(d.kind, &d.key.namespace, &d.key.name),
                    what: HistoryWhat::Deleted {
                        uid: d.uid.clone(),
                        owners: d
                            .owners
                            .iter()
                            .map(|o| format!("{}/{} {}", o.kind, o.name, o.uid))
                            .collect(),
                    },
                },
            ));
        }
    }
    // Stable: entries of one instant keep the order above.
    out.sort_by_key(|(at, _)| *at);
    if out.len() > HISTORY_PER_RESTORE {
        out.drain(..out.len() - HISTORY_PER_RESTORE);
    }
    // Collected in place, the list would keep the room of the (time, entry) pairs and of
    // their growth: held in the report for as long as the restore is shown.
    let mut entries: Vec<HistoryEntry> = out.into_iter().map(|(_, e)| e).collect();
    entries.shrink_to_fit();
    entries
}

/// Events and managedFields have whole seconds, the watch its own clock to the nanosecond:
/// a whole-second time stands for the middle of its second, so that a deletion the watch saw
/// at 17.04 s comes before a create recorded as 17 s (made at 17.0-17.99 s).
pub fn order_time(t: Option<Timestamp>) -> Option<Timestamp> {
    t.map(|t| {
        if t.subsec_nanosecond() == 0 {
            t + jiff::SignedDuration::from_millis(500)
        } else {
            t
        }
    })
}

#[cfg(test)]
mod tests {
    use super::order_time;
    use jiff::Timestamp;

    #[test]
    fn a_whole_second_counts_as_the_middle_of_its_second() {
        let t = |s: &str| Some(s.parse::<Timestamp>().expect("time"));
        let deleted_seen = t("2026-01-01T00:00:17.04Z");
        let created_recorded = t("2026-01-01T00:00:17Z");
        let collected_seen = t("2026-01-01T00:00:17.80Z");
        assert!(order_time(deleted_seen) < order_time(created_recorded));
        assert!(order_time(created_recorded) < order_time(collected_seen));
        assert_eq!(order_time(None), None);
    }
}
