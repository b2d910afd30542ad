//! PURE analysis: `analyze(&Snapshot, &Settings, now) -> Report`. No I/O, no clock, no async:
//! the same input gives the same report, which is what makes `check` on a dump repeatable and
//! the rules table-testable.

mod bind_wait;
pub mod clock;
pub mod codes;
pub(crate) mod common;
pub mod controller;
pub mod copy_proof;
pub(crate) mod ctx;
pub(crate) mod disks;
mod emit;
mod finding_list;
pub mod forecast;
mod global;
pub mod history;
mod orig;
pub(crate) mod postgres;
pub mod preflight;
pub mod reclaim_policy;
pub mod report;
mod report_index;
pub mod report_order;
mod velero_backup;
mod vm;
mod vm_findings;
mod vm_steps;

pub use codes::{ActionKind, Code, Severity};
pub use ctx::{fmt_bytes, human, split_velero_restores, velero_restores_for};
pub use history::{HistoryEntry, HistoryWhat};
pub use report::*;
pub use report_index::Filed;

use crate::model::Kind;
use crate::model::snapshot::Snapshot;
use jiff::{SignedDuration, Timestamp};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// How long nothing may change before a running restore counts as stalled.
    pub stall_after: SignedDuration,
    /// A watch down for longer than this raises `watch-stale`.
    pub watch_stale_after: SignedDuration,
    /// A rename younger than this is still in progress, not half done.
    pub rename_grace: SignedDuration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            stall_after: SignedDuration::from_mins(10),
            watch_stale_after: SignedDuration::from_secs(30),
            // A still picture (a dump, `check`) shows what is; the live dashboard sets a few seconds
            // so a rename in flight does not flash as half done.
            rename_grace: SignedDuration::ZERO,
        }
    }
}

/// The reference: every restore and every finding, from scratch.
pub fn analyze(snap: &Snapshot, settings: &Settings, now: Timestamp) -> Report {
    let controller = std::sync::Arc::new(controller::of_snapshot(snap));
    let parts: Vec<NamespacePart> = part_namespaces(snap)
        .iter()
        .map(|ns| analyze_namespace(snap, settings, now, ns, controller.generation))
        .collect();
    assemble(snap, settings, now, parts.iter(), controller)
}

/// The namespaces `analyze_namespace` has anything to say about, in order: those holding a
/// RestoreJob, an `-orig` PVC (or the PV of a gone one), or Events about RestoreJobs.
pub fn part_namespaces(snap: &Snapshot) -> Vec<String> {
    let mut out = orig::namespaces(snap);
    out.extend(global::event_namespaces(snap));
    for rj in snap.restore_jobs.iter() {
        if !out.contains(rj.meta.namespace.as_str()) {
            out.insert(rj.meta.namespace.to_string());
        }
    }
    out.into_iter().collect()
}

/// One namespace's restores analysed, with the findings about them. Everything one restore's
/// analysis compares it with (other restores of the same application) is in its namespace, so
/// a namespace is the unit an incremental analysis redoes or reuses whole.
#[derive(Debug, Clone, Default)]
pub struct NamespacePart {
    pub restores: Vec<std::sync::Arc<RestoreView>>,
    /// The namespace's own findings (its restores' and its `-orig` PVCs'), in report order
    /// (`report_order`): the report merges these runs instead of sorting everything again,
    /// and holds them as they are until its list is read (`FindingList`).
    findings: report::Shared<Finding>,
    /// `global::app_hash` of the running restores, as `(hash, position in restores)`.
    apps: Vec<(u64, usize)>,
    /// HelmReleases left suspended by RestoreJobs gone from this namespace (counted only
    /// where `global::orphans_knowable`, a cluster-wide condition), in report order.
    orphaned: report::Shared<Finding>,
    orig_pvcs: Vec<std::sync::Arc<OrigPvcView>>,
    /// Where its restores and their findings are: made with the part, so that a report
    /// rebuilds the index of the namespaces a change redid only.
    index: std::sync::Arc<NsIndex>,
    /// Until when this part is the analysis at any later instant (`clock::Clock`); `None`
    /// when no rule's answer depends on the time.
    valid_until: Option<jiff::Timestamp>,
}

impl NamespacePart {
    /// Nothing to report: the same as no part at all.
    pub fn is_empty(&self) -> bool {
        self.restores.is_empty()
            && self.findings.is_empty()
            && self.orphaned.is_empty()
            && self.orig_pvcs.is_empty()
    }

    /// Whether it has findings of its own or orphaned suspensions (counted or not).
    pub fn has_findings(&self) -> bool {
        !self.findings.is_empty() || !self.orphaned.is_empty()
    }

    /// The earliest instant at which analysing the same objects could give another part.
    pub fn valid_until(&self) -> Option<Timestamp> {
        self.valid_until
    }

    /// Takes from `old`, the part of namespace `ns` before a change, each restore and `-orig`
    /// PVC that came out the same, and its findings when they all did: what a change did not
    /// alter keeps its identity, so the report's merge (`assemble`) and the dashboard's rows
    /// (`ui::list_memo`, by address) are not redone for it. Returns whether the findings (the
    /// namespace's own and its orphaned suspensions) are `old`'s.
    pub fn keep_unchanged(&mut self, ns: &str, old: &NamespacePart) -> bool {
        let mut taken = false;
        for (new, was) in self.restores.iter_mut().zip(&old.restores) {
            // A restore whose objects changed shows a later last change: told apart at once,
            // without comparing its steps, disks and history.
            if !std::sync::Arc::ptr_eq(new, was)
                && new.last_change == was.last_change
                && **new == **was
            {
                *new = std::sync::Arc::clone(was);
                taken = true;
            }
        }
        for (new, was) in self.orig_pvcs.iter_mut().zip(&old.orig_pvcs) {
            if !std::sync::Arc::ptr_eq(new, was) && **new == **was {
                *new = std::sync::Arc::clone(was);
            }
        }
        let same_findings = self.findings == old.findings;
        if same_findings {
            self.findings = std::sync::Arc::clone(&old.findings);
            taken = true;
        }
        let same_orphaned = self.orphaned == old.orphaned;
        if same_orphaned {
            self.orphaned = std::sync::Arc::clone(&old.orphaned);
        }
        if taken {
            // The index files the very restores and findings the report lists.
            let all_old = same_findings
                && self.restores.len() == old.restores.len()
                && self
                    .restores
                    .iter()
                    .zip(&old.restores)
                    .all(|(a, b)| std::sync::Arc::ptr_eq(a, b));
            self.index = if all_old {
                std::sync::Arc::clone(&old.index)
            } else {
                std::sync::Arc::new(NsIndex::new(ns, &self.restores, self.findings.iter()))
            };
        }
        same_findings && same_orphaned
    }
}

/// The restores of namespace `ns` and their own findings (not the cluster-wide ones), phrased
/// for the backup controller's `generation` (judged once for the whole snapshot by the caller:
/// `controller::of_snapshot`).
pub fn analyze_namespace(
    snap: &Snapshot,
    settings: &Settings,
    now: Timestamp,
    ns: &str,
    generation: controller::Generation,
) -> NamespacePart {
    let mut out = emit::Findings::default();
    let mut restores = Vec::new();
    let mut disk_uses = Vec::new();

    // Which applications have a restore in flight, to tell a lingering suspension from one a
    // newer restore made on purpose.
    let mut active_apps: std::collections::BTreeMap<(String, String, String), usize> =
        Default::default();
    let mut ctxs: Vec<ctx::Ctx> = snap
        .restore_jobs
        .in_namespace(ns)
        .map(|rj| {
            let mut c = ctx::Ctx::new(snap, settings, now, rj);
            c.generation = generation;
            c
        })
        .collect();
    let newest: std::collections::BTreeMap<(String, String, String), (Option<Timestamp>, String)> =
        ctxs.iter()
            .filter_map(|c| {
                c.target.as_ref().map(|t| {
                    (
                        (c.dest_ns().to_string(), t.kind.clone(), t.name.clone()),
                        (c.rj.meta.created, c.rj.meta.name.to_string()),
                    )
                })
            })
            .fold(Default::default(), |mut m, (k, v)| {
                let e = m.entry(k).or_insert(v.clone());
                if v > *e {
                    *e = v;
                }
                m
            });
    for c in &mut ctxs {
        if let Some(t) = &c.target {
            // Only a restore into the same place supersedes: a copy elsewhere leaves what an
            // in-place restore did to the application as it was.
            c.superseded = newest
                .get(&(c.dest_ns().to_string(), t.kind.clone(), t.name.clone()))
                .is_some_and(|(_, n)| n != &c.rj.meta.name);
        }
    }
    for c in ctxs.iter().filter(|c| !c.terminal()) {
        if let Some(t) = &c.target {
            *active_apps
                .entry((c.dest_ns().to_string(), t.kind.clone(), t.name.clone()))
                .or_default() += 1;
        }
    }

    for c in &ctxs {
        let mut keeps = false;
        let d = match c.driver {
            report::Driver::Velero => {
                let o = vm::analyze_vm(c, &mut out);
                keeps = o.keeps;
                DriverOutcome {
                    disk_names: o.disks.iter().map(|d| d.name.clone()).collect(),
                    leftovers: vm::leftovers(c, &o.disks),
                    tree: vm_tree(c, &o.disks),
                    disk_chains: o.disks.iter().map(|d| d.chain()).collect(),
                    history: history::collect(c, &history::Tree::vm(c, &o.disks)),
                    steps: o.steps,
                    ..DriverOutcome::default()
                }
            }
            report::Driver::Cnpg => {
                let o = postgres::analyze_pg(c, &mut out);
                let mut leftovers = Vec::new();
                if let Some(app) = c.app() {
                    let hr = crate::model::names::postgres_release(app);
                    if snap
                        .helm_releases
                        .get(c.ns, &hr)
                        .is_some_and(|h| h.is_suspended() == Some(true))
                    {
                        leftovers.push(format!("suspended HelmRelease {hr}"));
                    }
                }
                DriverOutcome {
                    steps: o.steps,
                    pg: o.view,
                    deadline: o.deadline,
                    deadline_governs: o.deadline_governs,
                    leftovers,
                    tree: pg_tree(c),
                    history: history::collect(c, &history::Tree::postgres(c)),
                    ..DriverOutcome::default()
                }
            }
            report::Driver::Other => DriverOutcome {
                steps: vec![common::validate_step(c).0],
                history: history::collect(c, &history::Tree::default()),
                ..DriverOutcome::default()
            },
        };
        let DriverOutcome {
            steps,
            disk_chains,
            disk_names,
            pg,
            deadline,
            deadline_governs,
            leftovers,
            mut tree,
            history,
        } = d;
        tree.push(c.rj.meta.last_change);
        tree.extend(c.events.iter().map(|e| e.last));
        let last_change = tree.into_iter().flatten().max();
        let other_active = c.target.as_ref().is_some_and(|t| {
            let n = active_apps
                .get(&(c.dest_ns().to_string(), t.kind.clone(), t.name.clone()))
                .copied()
                .unwrap_or(0);
            n > usize::from(!c.terminal())
        });
        let releases = common::suspended_releases(c, &disk_names);
        let facts = common::RestoreFacts {
            releases: releases.clone(),
            leftovers,
            last_change,
            other_active_on_app: other_active,
            deadline_governs,
        };
        common::restore_findings(c, &facts, &mut out);
        if keeps && c.keep_original() != Some(false) {
            disk_uses.push((
                c.id.clone(),
                c.terminal(),
                c.hash.clone(),
                disk_names.clone(),
            ));
        }
        let stale = stale_kinds(c.driver).iter().any(|k| snap.is_stale(*k));
        restores.push(std::sync::Arc::new(RestoreView {
            id: c.id.clone(),
            uid: c.rj.meta.uid.to_string(),
            driver: c.driver,
            target: c.target.clone(),
            in_place: c.in_place,
            phase: match &c.rj.phase {
                crate::model::objects::RjPhase::Invalid(_) => "unknown".into(),
                p => p.as_str().to_string(),
            },
            terminal: c.terminal(),
            message: c.rj.message.clone(),
            created: c.rj.meta.created,
            started_at: c.started(),
            completed_at: c.rj.completed_at.known().copied(),
            deadline,
            backup: c.rj.backup_ref.clone(),
            hash: c.hash.clone(),
            keep_original_pvc: c.keep_original(),
            steps,
            disks: disk_chains,
            postgres: pg,
            events: c.event_lines(),
            releases,
            last_change,
            stale,
            history,
        }));
    }

    let valid_until = earliest(ctxs.iter().map(|c| c.clock.valid_until()));
    // Only restores of one namespace can share an `-orig` name: a namespace's own rule.
    global::hash_collisions(snap, &disk_uses, generation, &mut out);
    let apps = restores
        .iter()
        .enumerate()
        .filter_map(|(pos, r)| Some((global::app_hash(snap, r)?, pos)))
        .collect();
    let mut orphaned = emit::Findings::default();
    global::orphaned_suspensions_in(snap, ns, &restores, &mut orphaned);
    let mut orig_out = emit::Findings::default();
    let orig_pvcs = orig::inventory_in(snap, ns, &mut orig_out);
    let mut findings = shared(out.0, &restores);
    findings.extend(shared(orig_out.0, &restores));
    let findings = std::sync::Arc::new(report_order::sorted(findings));
    let orphaned = std::sync::Arc::new(report_order::sorted(shared(orphaned.0, &restores)));
    let index = std::sync::Arc::new(NsIndex::new(ns, &restores, findings.iter()));
    NamespacePart {
        restores,
        findings,
        apps,
        orphaned,
        orig_pvcs,
        index,
        valid_until,
    }
}

/// The earliest of some instants, `None` standing for never.
pub fn earliest(times: impl IntoIterator<Item = Option<Timestamp>>) -> Option<Timestamp> {
    times.into_iter().flatten().min()
}

/// The report from every namespace's part (in namespace order) and the cluster-wide findings,
/// which are always redone: they read across namespaces and are cheap next to the restores.
pub fn assemble<'p>(
    snap: &Snapshot,
    settings: &Settings,
    now: Timestamp,
    parts: impl Iterator<Item = &'p NamespacePart> + Clone,
    controller: std::sync::Arc<controller::ControllerGeneration>,
) -> Report {
    assemble_reusing(snap, settings, now, parts, controller, None, None).0
}

/// What a report's findings were merged from besides the parts' own: the cluster-wide findings
/// and whether orphaned suspensions counted.
#[derive(Default, Clone)]
pub struct MergedFrom {
    global: Vec<std::sync::Arc<Finding>>,
    knowable: bool,
}

/// `assemble`, reusing what it can of `earlier` (the report made before, of the same parts
/// but those redone): its lists of restores and `-orig` PVCs when the parts hold the very same
/// ones, and its findings, not merged again, given `merged_from` when every part's findings
/// are the very ones `earlier`'s were merged from with it. On 1,000 restores the merge
/// compared findings by restore name on every change although a change rarely alters a
/// finding. Returns what this report's findings were merged from.
pub fn assemble_reusing<'p>(
    snap: &Snapshot,
    settings: &Settings,
    now: Timestamp,
    parts: impl Iterator<Item = &'p NamespacePart> + Clone,
    controller: std::sync::Arc<controller::ControllerGeneration>,
    earlier: Option<&Report>,
    merged_from: Option<&MergedFrom>,
) -> (Report, MergedFrom) {
    let restores = shared_list(
        parts.clone().flat_map(|p| p.restores.iter()),
        earlier.map(|e| &e.restores),
    );
    let mut apps = Vec::new();
    let mut offset = 0;
    for p in parts.clone() {
        apps.extend(p.apps.iter().map(|(h, pos)| (*h, offset + pos)));
        offset += p.restores.len();
    }
    let mut out = emit::Findings::default();
    global::concurrent(snap, &restores, apps, &mut out);
    let clock = clock::Clock::new(now);
    global::objectstore_owners(snap, &restores, settings, &clock, &mut out);
    global::objectstore_missing(snap, &restores, settings, &clock, &mut out);
    global::system_bucket(snap, &restores, &mut out);
    global::watch_stale(snap, settings, &clock, &mut out);
    // The parts' findings are shared as they are (marked stale with their own restores), each
    // part's already in report order; only the cluster-wide ones are new.
    let global = report_order::sorted(shared(out.0, &restores));
    let knowable = global::orphans_knowable(snap);
    let findings = match (earlier, merged_from) {
        (Some(e), Some(from)) if from.knowable == knowable && from.global == global => {
            std::sync::Arc::clone(&e.findings)
        }
        _ => {
            // Merged when read (`FindingList`): one reference count per namespace with
            // findings here, not one per finding.
            let mut runs = Vec::new();
            for p in parts.clone() {
                if !p.findings.is_empty() {
                    runs.push(std::sync::Arc::clone(&p.findings));
                }
                if knowable && !p.orphaned.is_empty() {
                    runs.push(std::sync::Arc::clone(&p.orphaned));
                }
            }
            std::sync::Arc::new(report::FindingList::merged_later(runs, global.clone()))
        }
    };
    let orig_pvcs = shared_list(
        parts.clone().flat_map(|p| p.orig_pvcs.iter()),
        earlier.map(|e| &e.orig_pvcs),
    );
    let index = ReportIndex::from_namespaces(
        restores.len(),
        findings.stamp(),
        parts
            .clone()
            .map(|p| std::sync::Arc::clone(&p.index))
            .collect(),
        global.iter().cloned().chain(
            parts
                .clone()
                .filter(|_| knowable)
                .flat_map(|p| p.orphaned.iter().cloned()),
        ),
    );
    let valid_until = earliest(
        parts
            .map(|p| p.valid_until)
            .chain(std::iter::once(clock.valid_until())),
    );
    let report = Report {
        now: Some(now),
        valid_until,
        restores,
        findings,
        orig_pvcs,
        controller,
        index,
    };
    (report, MergedFrom { global, knowable })
}

/// `items` as a report's list: `earlier`'s own when it holds the very same items (told by
/// their addresses, no reference count touched), a new list otherwise.
fn shared_list<'a, T: 'a>(
    items: impl Iterator<Item = &'a std::sync::Arc<T>> + Clone,
    earlier: Option<&report::Shared<T>>,
) -> report::Shared<T> {
    if let Some(e) = earlier
        && items
            .clone()
            .map(std::sync::Arc::as_ptr)
            .eq(e.iter().map(std::sync::Arc::as_ptr))
    {
        return std::sync::Arc::clone(e);
    }
    std::sync::Arc::new(items.cloned().collect())
}

/// Findings made shareable, each marked stale when the restore it is about shows stale data.
fn shared(
    findings: Vec<Finding>,
    restores: &[std::sync::Arc<RestoreView>],
) -> Vec<std::sync::Arc<Finding>> {
    if findings.is_empty() {
        return Vec::new();
    }
    let stale: std::collections::HashMap<&RestoreId, bool> =
        restores.iter().map(|r| (&r.id, r.stale)).collect();
    findings
        .into_iter()
        .map(|mut f| {
            if let Some(s) = f.restore.as_ref().and_then(|id| stale.get(id)) {
                f.stale |= *s;
            }
            std::sync::Arc::new(f)
        })
        .collect()
}

/// What one driver's rules produce for a restore.
#[derive(Default)]
struct DriverOutcome {
    steps: Vec<Step>,
    disk_chains: Vec<DiskChain>,
    disk_names: Vec<String>,
    pg: Option<PgView>,
    deadline: Option<Timestamp>,
    deadline_governs: bool,
    leftovers: Vec<String>,
    tree: Vec<Option<Timestamp>>,
    history: Vec<HistoryEntry>,
}

fn stale_kinds(driver: report::Driver) -> &'static [Kind] {
    match driver {
        report::Driver::Velero => &[
            Kind::RestoreJob,
            Kind::PersistentVolumeClaim,
            Kind::PersistentVolume,
            Kind::DataVolume,
            Kind::VirtualMachine,
            Kind::VirtualMachineInstance,
            Kind::HelmRelease,
            Kind::VeleroRestore,
            Kind::DataDownload,
        ],
        report::Driver::Cnpg => &[
            Kind::RestoreJob,
            Kind::CnpgCluster,
            Kind::ObjectStore,
            Kind::Postgres,
            Kind::HelmRelease,
            Kind::PersistentVolumeClaim,
        ],
        report::Driver::Other => &[Kind::RestoreJob],
    }
}

fn vm_tree(c: &ctx::Ctx, disks: &[disks::Disk]) -> Vec<Option<Timestamp>> {
    let mut t = Vec::new();
    for d in disks {
        t.push(d.dv.and_then(|x| x.meta.last_change));
        t.push(d.pvc.and_then(|x| x.meta.last_change));
        t.push(d.pv.and_then(|x| x.meta.last_change));
        t.push(d.orig.and_then(|x| x.meta.last_change));
        t.push(d.orig_pv.and_then(|x| x.meta.last_change));
        t.push(d.download.and_then(|x| x.meta.last_change));
    }
    t.push(c.velero.and_then(|v| v.meta.last_change));
    if let Some(vm) = c.vm_name() {
        t.push(c.snap.vms.get(c.ns, &vm).and_then(|x| x.meta.last_change));
        t.push(c.snap.vmis.get(c.ns, &vm).and_then(|x| x.meta.last_change));
        t.push(
            c.snap
                .helm_releases
                .get(c.ns, &vm)
                .and_then(|x| x.meta.last_change),
        );
    }
    for d in disks {
        t.push(
            c.snap
                .helm_releases
                .get(c.ns, &d.name)
                .and_then(|x| x.meta.last_change),
        );
    }
    t
}

fn pg_tree(c: &ctx::Ctx) -> Vec<Option<Timestamp>> {
    let Some(app) = c.app() else {
        return Vec::new();
    };
    let cl = crate::model::names::postgres_release(app);
    vec![
        c.snap
            .clusters
            .get(c.ns, &cl)
            .and_then(|x| x.meta.last_change),
        c.snap
            .helm_releases
            .get(c.ns, &cl)
            .and_then(|x| x.meta.last_change),
        c.snap
            .postgreses
            .get(c.ns, app)
            .and_then(|x| x.meta.last_change),
        c.snap
            .object_stores
            .get(c.ns, &cl)
            .and_then(|x| x.meta.last_change),
    ]
}
