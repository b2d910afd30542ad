//! What one RestoreJob is about: its Backup, target, driver, disks and the events that mention
//! it. Built once per restore and read by the step and finding rules.

use super::Settings;
use super::clock::Clock;
use super::report::{Driver, EventLine, ObjRef, RestoreId, TargetRef};
use crate::model::names::{
    LABEL_OWNED_BY_NAME, LABEL_OWNED_BY_NAMESPACE, VELERO_NAMESPACE, short_hash,
    vm_instance_release,
};
use crate::model::objects::{Backup, RestoreJob, VeleroRestore};
use crate::model::snapshot::Snapshot;
use crate::model::snapshot::{velero_generate_term, velero_owner_term, velero_prefix_term};
use crate::model::{Field, Kind, Obj};
use jiff::{SignedDuration, Timestamp};
use std::sync::Arc;

pub struct Ctx<'a> {
    pub snap: &'a Snapshot,
    pub settings: &'a Settings,
    /// The only way to the time: each question it answers records when its answer stops
    /// holding, so the restore's analysis knows until when it holds (`Clock::valid_until`).
    pub clock: Clock,
    pub rj: &'a Arc<Obj<RestoreJob>>,
    pub id: RestoreId,
    pub ns: &'a str,
    pub backup: Option<&'a Arc<Obj<Backup>>>,
    pub target: Option<TargetRef>,
    pub driver: Driver,
    pub in_place: bool,
    pub hash: String,
    /// Events about the RestoreJob, oldest first.
    pub events: Vec<&'a Obj<crate::model::objects::Event>>,
    /// A newer RestoreJob targets the same application: facts about the application are
    /// reported on that one, not repeated on every old restore.
    pub superseded: bool,
    /// This restore's Velero Restore: carries its owner labels (or generateName) and was not
    /// created before it.
    pub velero: Option<&'a Arc<Obj<VeleroRestore>>>,
    /// With no Restore of its own, the newest one carrying its labels that predates it: left
    /// by a deleted RestoreJob of the same name. The controller takes it for this one's and
    /// skips every preparation step; nothing of it may be credited to this restore.
    pub stale_velero: Option<&'a Arc<Obj<VeleroRestore>>>,
    /// The backup controller's generation (cluster-wide, judged once per analysis): findings
    /// phrase what a state leads to under it. `Unknown` unless the analysis sets it.
    pub generation: super::controller::Generation,
}

impl<'a> Ctx<'a> {
    pub fn new(
        snap: &'a Snapshot,
        settings: &'a Settings,
        now: Timestamp,
        rj: &'a Arc<Obj<RestoreJob>>,
    ) -> Self {
        let ns = rj.meta.namespace.as_str();
        let backup = rj
            .backup_ref
            .as_deref()
            .and_then(|b| snap.backups.get(ns, b));
        let app = rj
            .target
            .clone()
            .or_else(|| backup.and_then(|b| b.application_ref.clone()));
        let mut target = app.map(|a| TargetRef {
            kind: a.kind,
            name: a.name,
        });
        let mut events = Vec::new();
        for e in snap.events.in_namespace(ns) {
            let about_us = e.involved.kind == "RestoreJob"
                && e.involved.name == rj.meta.name
                && e.involved
                    .uid
                    .as_deref()
                    .is_none_or(|u| rj.meta.uid.is_empty() || u == rj.meta.uid);
            if about_us {
                events.push(&**e);
            }
        }
        events.sort_by_key(|e| e.last);
        if target.is_none() {
            // Backup gone and no targetApplicationRef: the controller's own events still name
            // the releases and the VM it touched.
            target = infer_target(&events);
        }
        let driver = driver_of(backup.map(|b| &***b), target.as_ref());
        let in_place = destination_namespace(rj, driver) == ns;
        let (velero, stale_velero) = split_velero_restores(
            velero_restores_for(snap, ns, &rj.meta.name),
            rj.meta.created,
        );
        Ctx {
            snap,
            settings,
            clock: Clock::new(now),
            rj,
            id: RestoreId {
                namespace: ns.to_string(),
                name: rj.meta.name.to_string(),
            },
            ns,
            backup,
            target,
            driver,
            in_place,
            hash: short_hash(&rj.meta.name),
            events,
            superseded: false,
            velero,
            stale_velero,
            generation: super::controller::Generation::Unknown,
        }
    }

    /// The namespace the restore writes the application into: its own, or a copy's
    /// `targetNamespace`.
    pub fn dest_ns(&self) -> &'a str {
        let rj: &'a Obj<RestoreJob> = self.rj;
        match (&rj.options.target_namespace, self.in_place) {
            (Field::Known(t), false) => t.as_str(),
            _ => self.ns,
        }
    }

    pub fn app(&self) -> Option<&str> {
        self.target.as_ref().map(|t| t.name.as_str())
    }

    pub fn target_kind(&self) -> Option<&str> {
        self.target.as_ref().map(|t| t.kind.as_str())
    }

    pub fn terminal(&self) -> bool {
        self.rj.phase.is_terminal()
    }

    pub fn rj_ref(&self) -> ObjRef {
        ObjRef::new(Kind::RestoreJob, self.ns, &self.rj.meta.name)
    }

    /// `keepOriginalPVC`, default true; `None` when unreadable.
    pub fn keep_original(&self) -> Option<bool> {
        self.rj
            .options
            .keep_original_pvc
            .or_default_if_missing(true)
    }

    pub fn is_vm_instance(&self) -> bool {
        self.target_kind() == Some("VMInstance")
    }

    pub fn started(&self) -> Option<Timestamp> {
        self.rj.started_at.known().copied()
    }

    /// When the restore began, as best known.
    pub fn began(&self) -> Option<Timestamp> {
        self.started().or(self.rj.meta.created)
    }

    pub fn older_than(&self, t: Option<Timestamp>, d: SignedDuration) -> bool {
        t.is_some_and(|t| self.clock.older_than(t, d))
    }

    pub fn event_with(
        &self,
        reason_or_message: &str,
    ) -> Option<&'a Obj<crate::model::objects::Event>> {
        self.events.iter().copied().find(|e| {
            e.reason
                .as_deref()
                .is_some_and(|r| r.contains(reason_or_message))
                || e.message
                    .as_deref()
                    .is_some_and(|m| m.contains(reason_or_message))
        })
    }

    /// Whether `cluster` is the Cluster re-rendered for this restore, by the evidence the
    /// snapshot holds (see `model::ownership::cluster_role`; the watch's tombstone of a purged
    /// Cluster of the same name counts). The actions ask the same question.
    pub fn cluster_role(
        &self,
        cluster: &Obj<crate::model::objects::CnpgCluster>,
    ) -> crate::model::ownership::ClusterRole {
        let tomb = self.snap.tombstones.last(
            Kind::CnpgCluster,
            &cluster.meta.namespace,
            &cluster.meta.name,
        );
        crate::model::ownership::cluster_role(
            self.rj,
            cluster,
            crate::model::ownership::PurgeEvidence {
                deleted_uid: tomb.map(|t| t.uid.as_str()),
                deleted_at: tomb.map(|t| t.at),
            },
        )
    }

    pub fn vm_name(&self) -> Option<String> {
        self.app().map(vm_instance_release)
    }

    pub fn event_lines(&self) -> Vec<EventLine> {
        self.events
            .iter()
            .map(|e| EventLine {
                time: e.last,
                type_: e.type_.clone().unwrap_or_default(),
                reason: e.reason.clone().unwrap_or_default(),
                message: e.message.clone().unwrap_or_default(),
                count: e.count.unwrap_or(1),
                about: None,
            })
            .collect()
    }
}

/// Whether `text` mentions `name` as a whole word (`vm-disk-data` is not in `vm-disk-data2`).
pub fn mentions(text: &str, name: &str) -> bool {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        before.is_none_or(|c| !is_name_char(c)) && after.is_none_or(|c| !is_name_char(c))
    })
}

fn infer_target(events: &[&Obj<crate::model::objects::Event>]) -> Option<TargetRef> {
    for e in events {
        let Some(msg) = e.message.as_deref() else {
            continue;
        };
        for word in msg.split(|c: char| c.is_whitespace() || c == '"' || c == ',' || c == ':') {
            if let Some(app) = word.strip_prefix("vm-instance-").filter(|a| !a.is_empty()) {
                return Some(TargetRef {
                    kind: "VMInstance".into(),
                    name: app.to_string(),
                });
            }
            if let Some(app) = word
                .strip_prefix("postgres-")
                .filter(|a| !a.is_empty() && msg.contains("HelmRelease"))
            {
                return Some(TargetRef {
                    kind: "Postgres".into(),
                    name: app.to_string(),
                });
            }
        }
    }
    None
}

/// Where a restore puts the application: the Velero driver's `targetNamespace` when set (a
/// copy), else the RestoreJob's own namespace (in place). Two restores touch the same disks
/// only when this and the application agree.
pub fn destination_namespace(rj: &Obj<RestoreJob>, driver: Driver) -> &str {
    match (driver, &rj.options.target_namespace) {
        (Driver::Velero, Field::Known(t)) if !t.is_empty() => t.as_str(),
        _ => rj.meta.namespace.as_str(),
    }
}

pub fn driver_of(backup: Option<&Backup>, target: Option<&TargetRef>) -> Driver {
    if let Some(kind) = backup
        .and_then(|b| b.strategy_ref.as_ref())
        .map(|s| s.kind.as_str())
    {
        match kind {
            "Velero" => return Driver::Velero,
            "CNPG" => return Driver::Cnpg,
            _ => {}
        }
    }
    match target.map(|t| t.kind.as_str()) {
        Some("VMInstance" | "VMDisk") => Driver::Velero,
        Some("Postgres") => Driver::Cnpg,
        _ => Driver::Other,
    }
}

/// Whether `t` is known to come before the RestoreJob's creation: what a predecessor of the
/// same name left behind is (creationTimestamp has whole seconds, and the controller creates
/// its objects seconds after the RestoreJob, so the same second counts as after).
pub fn predates(t: Option<Timestamp>, rj_created: Option<Timestamp>) -> bool {
    matches!((t, rj_created), (Some(t), Some(r)) if t < r)
}

type RestoreRef<'a> = &'a Arc<Obj<VeleroRestore>>;

/// This restore's Velero Restore (the newest not created before the RestoreJob) and, when it
/// has none, the newest predecessor's one that the controller would take for it.
pub fn split_velero_restores(
    candidates: Vec<RestoreRef<'_>>,
    rj_created: Option<Timestamp>,
) -> (Option<RestoreRef<'_>>, Option<RestoreRef<'_>>) {
    let (stale, ours): (Vec<_>, Vec<_>) = candidates
        .into_iter()
        .partition(|r| predates(r.meta.created, rj_created));
    let ours = ours.into_iter().max_by_key(|r| r.meta.created);
    let stale = if ours.is_none() {
        stale.into_iter().max_by_key(|r| r.meta.created)
    } else {
        None
    };
    (ours, stale)
}

/// The Velero Restores the controller would take for a RestoreJob: found by its owner labels,
/// or by the `<ns>.<name>-` generateName when labels were stripped. Name order.
pub fn velero_restores_for<'a>(
    snap: &'a Snapshot,
    ns: &str,
    name: &str,
) -> Vec<&'a Arc<Obj<VeleroRestore>>> {
    let prefix = format!("{ns}.{name}-");
    // Candidates from the index (every Restore the filter below can accept carries one of
    // these terms), in name order as a namespace scan would give them.
    let store = &snap.velero_restores;
    let mut candidates: Vec<&'a Arc<Obj<VeleroRestore>>> = store
        .by_term(&velero_owner_term(Some(ns), name))
        .iter()
        .chain(store.by_term(&velero_owner_term(None, name)))
        .chain(store.by_term(&velero_generate_term(&prefix)))
        .chain(store.by_term(&velero_prefix_term(&prefix)))
        .filter(|r| r.meta.namespace == VELERO_NAMESPACE)
        .collect();
    candidates.sort_by(|a, b| a.meta.name.cmp(&b.meta.name));
    candidates.dedup_by(|a, b| Arc::ptr_eq(a, b));
    candidates.retain(|r| {
        let by_label = r.meta.label(LABEL_OWNED_BY_NAME) == Some(name)
            && r.meta
                .label(LABEL_OWNED_BY_NAMESPACE)
                .is_none_or(|n| n == ns);
        let by_name = r.meta.generate_name.as_deref() == Some(prefix.as_str())
            || (r.meta.name.starts_with(&prefix) && r.meta.label(LABEL_OWNED_BY_NAME).is_none());
        by_label || by_name
    });
    candidates
}

/// "12m", "2h05m", "40s": compact durations for messages.
pub fn human(d: SignedDuration) -> String {
    let secs = d.as_secs().max(0);
    if secs < 120 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m", secs / 60)
    } else if secs < 86400 {
        format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60)
    } else {
        format!("{}d{}h", secs / 86400, (secs % 86400) / 3600)
    }
}

pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
