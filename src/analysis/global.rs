//! Rules across restores and objects: concurrency, hash collisions, ObjectStore ownership,
//! Postgres apps that cannot bootstrap, and watches that went stale.

use super::Settings;
use super::clock::Clock;
use super::codes::Code;
use super::emit::Findings;
use super::report::{ObjRef, RestoreId, RestoreView};
use crate::model::Kind;
use crate::model::names::LABEL_CNPG_CLUSTER;
use crate::model::objects::find_condition;
use crate::model::snapshot::{Snapshot, SyncState};
use std::collections::BTreeMap;

/// Where a running restore writes its application, `(namespace, kind, name)`: an in-place
/// restore and a copy into another namespace touch different disks; a copy into a namespace
/// where the same application is restored in place touches the same ones. `None` for a finished
/// restore or one without a target.
fn app_of<'a>(snap: &'a Snapshot, r: &'a RestoreView) -> Option<(&'a str, &'a str, &'a str)> {
    if r.terminal {
        return None;
    }
    let t = r.target.as_ref()?;
    let dest = if r.in_place {
        r.id.namespace.as_str()
    } else {
        snap.restore_jobs
            .get(&r.id.namespace, &r.id.name)
            .map_or(r.id.namespace.as_str(), |rj| {
                super::ctx::destination_namespace(rj, r.driver)
            })
    };
    Some((dest, t.kind.as_str(), t.name.as_str()))
}

/// A running restore's application (`app_of`) as a number, made with its namespace's part: the
/// cluster-wide rule then compares numbers, not strings (it runs on every change, over every
/// restore in the cluster). Equal applications give equal numbers; equal numbers are checked.
pub fn app_hash(snap: &Snapshot, r: &RestoreView) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let app = app_of(snap, r)?;
    // Fixed keys: the numbers of parts made at different times are compared.
    let mut h = std::hash::DefaultHasher::new();
    app.hash(&mut h);
    Some(h.finish())
}

/// Two or more running restores of one application. `apps`: `app_hash` of `restores[pos]`,
/// as `(hash, pos)`, for each running restore with a target.
pub fn concurrent(
    snap: &Snapshot,
    restores: &[std::sync::Arc<RestoreView>],
    mut apps: Vec<(u64, usize)>,
    out: &mut Findings,
) {
    apps.sort_unstable();
    let mut by_app: BTreeMap<(&str, &str, &str), Vec<&RestoreView>> = BTreeMap::new();
    for run in apps.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1) {
        // In report order (`pos` ascending within a run), as the restores are listed.
        for r in run.iter().filter_map(|(_, pos)| restores.get(*pos)) {
            if let Some(app) = app_of(snap, r) {
                by_app.entry(app).or_default().push(r);
            }
        }
    }
    for ((dest, kind, name), group) in by_app.into_iter().filter(|(_, g)| g.len() > 1) {
        let names: Vec<&str> = group.iter().map(|r| r.id.name.as_str()).collect();
        for r in &group {
            out.push(
                snap,
                Code::ConcurrentRestores,
                Some(&r.id),
                group.iter().map(|o| ObjRef::new(Kind::RestoreJob, &o.id.namespace, &o.id.name)).collect(),
                format!("{} restores run at once on {kind} {name} in {dest}: {}; nothing locks them against each other", group.len(), names.join(", ")),
                "Delete all but one of them (deleting does not undo suspend, halt or rename: check what the deleted one left)".into(),
            );
        }
    }
}

/// `(restore, terminal, disk names)` of VM restores that keep disks.
pub type DiskUse = (RestoreId, bool, String, Vec<String>);

/// Restores of one namespace (`uses` are a namespace part's) that would keep a disk under the
/// same `-orig` name.
pub fn hash_collisions(
    snap: &Snapshot,
    uses: &[DiskUse],
    generation: super::controller::Generation,
    out: &mut Findings,
) {
    // Only restores of one namespace with the same hash can collide: compare within those
    // groups, not every pair in the cluster (a thousand restores would be half a million).
    let mut groups: BTreeMap<(&str, &str), Vec<&DiskUse>> = BTreeMap::new();
    for u in uses {
        groups
            .entry((u.0.namespace.as_str(), u.2.as_str()))
            .or_default()
            .push(u);
    }
    for group in groups.values().filter(|g| g.len() > 1) {
        collisions_in(snap, group, generation, out);
    }
}

fn collisions_in(
    snap: &Snapshot,
    uses: &[&DiskUse],
    generation: super::controller::Generation,
    out: &mut Findings,
) {
    for (i, (a, a_term, a_hash, a_disks)) in uses.iter().copied().enumerate() {
        for (b, b_term, b_hash, b_disks) in uses[i + 1..].iter().copied() {
            if a.namespace != b.namespace
                || a.name == b.name
                || a_hash != b_hash
                || (*a_term && *b_term)
            {
                continue;
            }
            let shared: Vec<&String> = a_disks.iter().filter(|d| b_disks.contains(d)).collect();
            if shared.is_empty() {
                continue;
            }
            for (me, other) in [(a, b), (b, a)] {
                out.push(
                    snap,
                    Code::OrigHashCollision,
                    Some(me),
                    vec![ObjRef::new(Kind::RestoreJob, &me.namespace, &me.name), ObjRef::new(Kind::RestoreJob, &other.namespace, &other.name)],
                    format!(
                        "RestoreJobs {} and {} share the -orig hash {a_hash} and both restore {}: they would keep the disk under the same name {}-orig-{a_hash}; for the second to get there, {}",
                        me.name,
                        other.name,
                        shared.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                        shared[0],
                        super::controller::foreign_orig_consequence(generation)
                    ),
                    "Rename one RestoreJob (delete and re-create it under another name) before it reaches the keep-disks step".into(),
                );
            }
        }
    }
}

pub fn objectstore_owners(
    snap: &Snapshot,
    restores: &[std::sync::Arc<RestoreView>],
    settings: &Settings,
    clock: &Clock,
    out: &mut Findings,
) {
    for os in snap.object_stores.iter() {
        let Some(owner) = os.meta.controller_owner().filter(|o| o.kind == "Cluster") else {
            continue;
        };
        let ns = os.meta.namespace.as_str();
        let live = snap.clusters.get(ns, &owner.name);
        let restore = restores
            .iter()
            .filter(|r| {
                r.id.namespace == ns
                    && r.postgres
                        .as_ref()
                        .is_some_and(|p| p.cluster_name == owner.name)
            })
            .max_by_key(|r| (!r.terminal, r.created));
        let problem = match live {
            Some(c) if c.meta.uid == owner.uid => None,
            Some(c) => {
                // The driver re-applies the ObjectStore right after the chart renders a new
                // Cluster: give it the grace period before calling the UID stale.
                let fresh = c
                    .meta
                    .created
                    .is_some_and(|t| clock.younger_than(t, settings.rename_grace));
                (!fresh).then(|| format!("its controller owner is Cluster {} UID {}, but the live Cluster has UID {}", owner.name, owner.uid, c.meta.uid))
            }
            None => {
                // During a purge the Cluster is gone on purpose.
                let purging = restore.is_some_and(|r| {
                    !r.terminal
                        && snap.restore_jobs.get(ns, &r.id.name).is_some_and(|rj| {
                            find_condition(&rj.conditions, "TargetPurged")
                                .is_none_or(|c| !c.is_true())
                        })
                });
                let observed = super::disks::kind_observed(snap, Kind::CnpgCluster);
                (!purging && observed).then(|| {
                    format!(
                        "its controller owner Cluster {} (UID {}) no longer exists",
                        owner.name, owner.uid
                    )
                })
            }
        };
        if let Some(p) = problem {
            let mut objects = vec![ObjRef::new(Kind::ObjectStore, ns, &os.meta.name)];
            if live.is_some() {
                objects.push(ObjRef::new(Kind::CnpgCluster, ns, &owner.name));
            }
            out.push(
                snap,
                Code::ObjectstoreOwnerStale,
                restore.map(|r| &r.id),
                objects,
                format!("ObjectStore {}: {p}; the garbage collector will delete it and WAL archiving stops", os.meta.name),
                format!("Point its ownerReference at the live Cluster's UID (kubectl edit objectstore {} -n {ns}), or let the backup driver re-apply it", os.meta.name),
            );
        }
    }
}

/// A Cluster whose barman plugin names an ObjectStore that does not exist: WAL archiving has no
/// destination. On a real cluster the garbage collector deletes an ObjectStore owned by a
/// purged Cluster's UID within a second, so this, not `objectstore-owner-stale`, is what an
/// operator usually gets to see; the live watch's tombstone says when and why it went.
pub fn objectstore_missing(
    snap: &Snapshot,
    restores: &[std::sync::Arc<RestoreView>],
    settings: &Settings,
    clock: &Clock,
    out: &mut Findings,
) {
    if !super::disks::kind_observed(snap, Kind::ObjectStore) {
        return;
    }
    for c in snap.clusters.iter() {
        let Some(store) = c.plugin_object_store.as_deref() else {
            continue;
        };
        let ns = c.meta.namespace.as_str();
        if c.meta.deleted.is_some() || snap.object_stores.get(ns, store).is_some() {
            continue;
        }
        // The backup driver applies the ObjectStore right after the chart renders the Cluster.
        if c.meta
            .created
            .is_some_and(|t| clock.younger_than(t, settings.rename_grace))
        {
            continue;
        }
        let restore = restores
            .iter()
            .filter(|r| {
                r.id.namespace == ns
                    && r.postgres
                        .as_ref()
                        .is_some_and(|p| p.cluster_name == c.meta.name)
            })
            .max_by_key(|r| (!r.terminal, r.created));
        let seen = snap
            .tombstones
            .last(Kind::ObjectStore, ns, store)
            .map(|t| {
                let owner = t
                    .owners
                    .iter()
                    .find(|o| o.controller)
                    .map(|o| {
                        if o.kind == "Cluster" && o.uid != c.meta.uid {
                            format!(
                                "; its controller owner was Cluster {} UID {}, not the live Cluster's UID {}: the garbage collector took it",
                                o.name, o.uid, c.meta.uid
                            )
                        } else {
                            format!("; its controller owner was {} {} UID {}", o.kind, o.name, o.uid)
                        }
                    })
                    .unwrap_or_else(|| "; it had no controller owner".into());
                format!(" The watch saw it deleted at {}{owner}.", t.at)
            })
            .unwrap_or_default();
        out.push(
            snap,
            Code::ObjectstoreMissing,
            restore.map(|r| &r.id),
            vec![
                ObjRef::new(Kind::CnpgCluster, ns, &c.meta.name),
                ObjRef::new(Kind::ObjectStore, ns, store),
            ],
            format!(
                "Cluster {} archives WAL through ObjectStore {store} (barmanObjectName), which does not exist: WAL archiving has no destination.{seen}",
                c.meta.name
            ),
            format!(
                "Recreate ObjectStore {store} in {ns} owned by the live Cluster {} (UID {}), or let the backup driver re-apply it; no WAL is archived until then",
                c.meta.name, c.meta.uid
            ),
        );
    }
}

pub fn system_bucket(
    snap: &Snapshot,
    restores: &[std::sync::Arc<RestoreView>],
    out: &mut Findings,
) {
    for app in snap.postgreses.iter() {
        if app.bootstrap_enabled.known() != Some(&true)
            || app.use_system_bucket.known() != Some(&true)
        {
            continue;
        }
        let ns = app.meta.namespace.as_str();
        let restore = restores
            .iter()
            .filter(|r| {
                r.id.namespace == ns
                    && r.target
                        .as_ref()
                        .is_some_and(|t| t.kind == "Postgres" && t.name == app.meta.name)
            })
            .max_by_key(|r| (!r.terminal, r.created));
        let cluster = crate::model::names::postgres_release(&app.meta.name);
        let pvcs = snap
            .pvcs
            .in_namespace(ns)
            .filter(|p| p.meta.label(LABEL_CNPG_CLUSTER) == Some(cluster.as_str()))
            .count();
        out.push(
            snap,
            Code::SystemBucketBootstrap,
            restore.map(|r| &r.id),
            vec![ObjRef::new(Kind::Postgres, ns, &app.meta.name)],
            format!(
                "Postgres {} has bootstrap.enabled: true with backup.useSystemBucket: true: the chart refuses to render, so no Cluster comes back after the purge{}",
                app.meta.name,
                if snap.clusters.get(ns, &cluster).is_none() && pvcs == 0 { " (none is there now)" } else { "" }
            ),
            "Set backup.useSystemBucket: false (with an explicit bucket) on the app, or restore into a copy".into(),
        );
    }
}

pub fn watch_stale(snap: &Snapshot, settings: &Settings, clock: &Clock, out: &mut Findings) {
    for (kind, h) in &snap.health {
        let (since, error) = match &h.state {
            SyncState::Resyncing { since, error } | SyncState::Failed { since, error } => {
                (*since, error.as_str())
            }
            _ => continue,
        };
        if !clock.older_than(since, settings.watch_stale_after) {
            continue;
        }
        out.push(
            snap,
            Code::WatchStale,
            None,
            Vec::new(),
            format!("the watch of {} has been down for {} ({error}); what is shown of them is from before", kind.info().label, clock.human_since(since)),
            "Check the connection to the API server and RBAC; restorewatch reconnects by itself".into(),
        )
        .stale = true;
    }
}

/// HelmReleases still suspended by a RestoreJob that no longer exists: only its Events tell.
/// Whether `orphaned_suspensions_in` may conclude anything: a dump of events alone cannot say
/// a RestoreJob is gone.
pub fn orphans_knowable(snap: &Snapshot) -> bool {
    !(!super::disks::kind_observed(snap, Kind::RestoreJob)
        && snap.restore_jobs.is_empty()
        && !snap.events.is_empty())
}

/// The namespaces holding Events about RestoreJobs, where `orphaned_suspensions_in` looks.
pub fn event_namespaces(snap: &Snapshot) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for e in snap.events.iter() {
        if e.involved.kind == "RestoreJob" && !out.contains(e.meta.namespace.as_str()) {
            out.insert(e.meta.namespace.to_string());
        }
    }
    out
}

/// In namespace `ns` (with `restores`, its restores); only counts where `orphans_knowable`.
pub fn orphaned_suspensions_in(
    snap: &Snapshot,
    ns: &str,
    restores: &[std::sync::Arc<RestoreView>],
    out: &mut Findings,
) {
    let mut seen = std::collections::BTreeSet::new();
    for e in snap.events.in_namespace(ns) {
        if e.involved.kind != "RestoreJob"
            || snap
                .restore_jobs
                .get(&e.meta.namespace, &e.involved.name)
                .is_some()
        {
            continue;
        }
        let Some(hr_name) = e
            .message_text()
            .and_then(|m| m.strip_prefix("Suspended HelmRelease "))
            .map(str::trim)
        else {
            continue;
        };
        let ns = e.meta.namespace.as_str();
        if !seen.insert((ns.to_string(), hr_name.to_string())) {
            continue;
        }
        let Some(hr) = snap.helm_releases.get(ns, hr_name) else {
            continue;
        };
        if hr.is_suspended() != Some(true) {
            continue;
        }
        // A restore running now may hold it suspended on purpose.
        if restores
            .iter()
            .any(|r| !r.terminal && r.id.namespace == ns && r.releases.iter().any(|x| x == hr_name))
        {
            continue;
        }
        // No RestoreJob to act on: resume-release takes one, so the remedy is the command.
        out.push(
            snap,
            Code::HelmreleaseLeftSuspended,
            None,
            vec![ObjRef::new(Kind::HelmRelease, ns, hr_name)],
            format!(
                "HelmRelease {hr_name} is still suspended; RestoreJob {} that suspended it is gone (its events remain): Flux no longer reconciles the application",
                e.involved.name
            ),
            format!("Resume it: flux resume helmrelease {hr_name} -n {ns} (or kubectl patch hr {hr_name} -n {ns} --type merge -p '{{\"spec\":{{\"suspend\":false}}}}')"),
        )
        .action = None;
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::{Code, Settings, analyze};
    use crate::model::parse_object;
    use crate::model::snapshot::Snapshot;
    use serde_json::json;

    /// A RestoreJob gone, the HelmRelease it suspended still suspended, and its `Suspended ...`
    /// Event folded by the EventCorrelator (a real server's form, reason kept).
    fn folded(message: &str) -> Snapshot {
        let objs = [
            json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": "vm-disk-data", "namespace": "tenant-a", "uid": "hr"},
                "spec": {"suspend": true}}),
            json!({"apiVersion": "v1", "kind": "Event",
                "metadata": {"name": "restore-1.1", "namespace": "tenant-a", "uid": "ev"},
                "involvedObject": {"kind": "RestoreJob", "name": "restore-1", "namespace": "tenant-a"},
                "reason": "PrepareForRestore", "type": "Normal", "message": message,
                "source": {"component": "restore-controller"},
                "lastTimestamp": "2026-12-02T03:52:10Z"}),
        ];
        let mut snap =
            Snapshot::from_objects(objs.into_iter().filter_map(|o| parse_object(o).ok()));
        // Every list in: a RestoreJob absent is known gone.
        snap.mark_every_kind(crate::model::snapshot::SyncState::Synced, None);
        snap
    }

    #[test]
    fn a_suspension_told_by_a_combined_event_is_still_seen() {
        let now = "2026-12-02T04:00:00Z".parse().expect("time");
        for message in [
            "Suspended HelmRelease vm-disk-data",
            "(combined from similar events): Suspended HelmRelease vm-disk-data",
        ] {
            let report = analyze(&folded(message), &Settings::default(), now);
            assert!(
                report
                    .findings
                    .iter()
                    .any(|f| f.code == Code::HelmreleaseLeftSuspended),
                "{message}: {:?}",
                report.findings
            );
        }
    }
}
