//! Incremental analysis: the report of the previous snapshot, with only what a change can
//! have altered redone.
//!
//! The unit of reuse is a namespace's restores (`analysis::NamespacePart`): every comparison
//! between restores (same application, superseded) stays inside a namespace. A change marks
//! the namespaces whose restores can read the changed object (conservatively: see
//! `touched`), those are re-analysed, the others are shared as they were (`Arc<RestoreView>`),
//! and the cluster-wide findings are redone each time (they read across namespaces).
//!
//! Time: the analyzer has its own clock, moved by `tick` (or with a change, `apply_at`). Each
//! part knows until when it holds (`NamespacePart::valid_until`: the next stall, deadline,
//! grace period or change of a duration's text); moving the clock redoes only the parts whose
//! instant has come, and the cluster-wide findings only when theirs has. The live pipeline
//! sleeps until `next_deadline`.

use super::clock_work::ClockWork;
use crate::analysis::controller::{self, ControllerGeneration};
use crate::analysis::{self, NamespacePart, Report, Settings};
use crate::model::Kind;
use crate::model::changes::Changes;
use crate::model::snapshot::{Snapshot, target_term, volume_term};
use crate::model::tombstones::Tombstones;
use jiff::Timestamp;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub struct Analyzer {
    settings: Settings,
    snap: Arc<Snapshot>,
    /// The controller generation the parts were phrased for: when it changes, every part is.
    /// Kept between changes: reading the evidence formats a line per `-orig` PVC, and on a real
    /// server's dump (400 of them) that was 60% of the work for one changed PVC. Shared with
    /// every report made for it, not copied into each.
    controller: Arc<ControllerGeneration>,
    now: Timestamp,
    parts: BTreeMap<String, NamespacePart>,
    report: Arc<Report>,
    /// What the report's findings were merged from besides the parts' (`None` once a part's
    /// findings changed since): lets `assemble` reuse the merged list.
    merged_from: Option<analysis::MergedFrom>,
    /// What `tick` alone has redone.
    clock_work: ClockWork,
}

/// Which namespaces a batch of changes can alter.
enum Touched {
    All,
    Some(BTreeSet<String>),
}

impl Analyzer {
    /// Analyses `snap` whole at `now`.
    pub fn new(snap: Arc<Snapshot>, settings: Settings, now: Timestamp) -> Analyzer {
        let mut a = Analyzer {
            controller: Arc::new(controller::of_snapshot(&snap)),
            settings,
            snap,
            now,
            parts: BTreeMap::new(),
            report: Arc::new(Report::default()),
            merged_from: None,
            clock_work: ClockWork::default(),
        };
        a.redo_all();
        a
    }

    pub fn report(&self) -> &Arc<Report> {
        &self.report
    }

    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snap
    }

    /// The clock the report was made for.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Takes the next snapshot, reached from the current one by `changes`, and returns its
    /// report at the analyzer's clock.
    pub fn apply(&mut self, snap: Arc<Snapshot>, changes: &Changes) -> Arc<Report> {
        self.apply_at(snap, changes, self.now)
    }

    /// `apply` with the clock moved to `now` first: the parts whose time has come are redone
    /// along with those the changes touch, in one assembly.
    pub fn apply_at(
        &mut self,
        snap: Arc<Snapshot>,
        changes: &Changes,
        now: Timestamp,
    ) -> Arc<Report> {
        let mut touched = touched(&self.snap, &snap, changes);
        // The generation is cluster-wide: evidence in one namespace (or the controller's image)
        // changes how every namespace's findings read.
        if evidence_may_change(&self.snap, &snap, changes) {
            let controller = controller::of_snapshot(&snap);
            if controller.generation != self.controller.generation {
                touched = Touched::All;
            }
            if controller != *self.controller {
                self.controller = Arc::new(controller);
            }
        }
        self.snap = snap;
        match touched {
            Touched::Some(mut namespaces) if now >= self.now => {
                self.now = now;
                namespaces.extend(self.expired());
                for ns in namespaces {
                    self.redo(&ns);
                }
                self.assemble();
            }
            _ => {
                self.now = now;
                self.redo_all();
            }
        }
        Arc::clone(&self.report)
    }

    /// Moves the clock to `now`: the parts whose answers expire by then are redone (the
    /// cluster-wide findings too when theirs do). Returns whether what the report says changed
    /// (its `now` aside): when not, there is nothing to publish or redraw. Before
    /// `next_deadline` nothing is redone and the report, `now` included, stays as it was.
    pub fn tick(&mut self, now: Timestamp) -> bool {
        if now < self.now {
            // Deadlines assume a clock that moves forward: start over.
            self.now = now;
            let before = Arc::clone(&self.report);
            self.redo_all();
            self.clock_work.count(self.parts.len());
            return !same_content(&before, &self.report);
        }
        self.now = now;
        if self.report.valid_until.is_none_or(|u| u > now) {
            return false;
        }
        let expired = self.expired();
        self.clock_work.count(expired.len());
        for ns in expired {
            self.redo(&ns);
        }
        let before = Arc::clone(&self.report);
        self.assemble();
        !same_content(&before, &self.report)
    }

    /// The clock moves (`tick`) that redid something, and the namespaces they redid, since
    /// the analyzer was made. A move that only reassembles (a cluster-wide deadline) counts
    /// with no namespace.
    pub fn clock_work(&self) -> ClockWork {
        self.clock_work
    }

    /// The earliest instant at which the report could change without any change of objects;
    /// `None` when it never will. `tick` before then does nothing.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.report.valid_until
    }

    /// The namespaces whose parts no longer hold at the analyzer's clock.
    fn expired(&self) -> Vec<String> {
        // The report holds until the earliest of its parts' deadlines: none has come before
        // it (on thousands of namespaces, a walk over every part per change otherwise).
        if self.report.valid_until.is_none_or(|u| u > self.now) {
            return Vec::new();
        }
        self.parts
            .iter()
            .filter(|(_, p)| p.valid_until().is_some_and(|u| u <= self.now))
            .map(|(ns, _)| ns.clone())
            .collect()
    }

    fn redo_all(&mut self) {
        self.parts.clear();
        self.merged_from = None;
        for ns in analysis::part_namespaces(&self.snap) {
            let part = analysis::analyze_namespace(
                &self.snap,
                &self.settings,
                self.now,
                &ns,
                self.controller.generation,
            );
            self.parts.insert(ns, part);
        }
        self.assemble();
        // The previous parts are freed now, amid the new ones: give their pages back (see
        // `malloc_tuning::release_free`). A whole analysis is rare after the first report
        // (relists, a new controller generation), and costs far more than the trim.
        crate::malloc_tuning::release_free();
    }

    fn redo(&mut self, ns: &str) {
        let mut part = analysis::analyze_namespace(
            &self.snap,
            &self.settings,
            self.now,
            ns,
            self.controller.generation,
        );
        let same_findings = match self.parts.get(ns) {
            Some(old) => part.keep_unchanged(ns, old),
            None => !part.has_findings(),
        };
        if !same_findings {
            self.merged_from = None;
        }
        if part.is_empty() {
            if self.parts.remove(ns).is_some_and(|old| old.has_findings()) {
                self.merged_from = None;
            }
        } else {
            self.parts.insert(ns.to_string(), part);
        }
    }

    fn assemble(&mut self) {
        let (report, from) = analysis::assemble_reusing(
            &self.snap,
            &self.settings,
            self.now,
            self.parts.values(),
            Arc::clone(&self.controller),
            Some(&self.report),
            self.merged_from.as_ref(),
        );
        self.report = Arc::new(report);
        self.merged_from = Some(from);
    }
}

/// Whether `changes` can alter the controller evidence (`controller::evidence`): an `-orig`
/// PVC, a PV whose claim is one (before or after), any RestoreJob, the controller's image, or
/// anything wholesale.
fn evidence_may_change(old: &Snapshot, new: &Snapshot, changes: &Changes) -> bool {
    use crate::model::names::parse_orig_name;
    if changes.health
        || !changes.kinds.is_empty()
        || old.scope != new.scope
        || old.controller_image != new.controller_image
        || old.controller_image_fallback != new.controller_image_fallback
        || !same_beyond_scope(old, new)
    {
        return true;
    }
    changes.objects.iter().any(|(kind, key)| match kind {
        Kind::RestoreJob => true,
        Kind::PersistentVolumeClaim => parse_orig_name(&key.name).is_some(),
        Kind::PersistentVolume => [old, new].iter().any(|s| {
            s.pvs
                .get("", &key.name)
                .and_then(|pv| pv.claim_ref.as_ref())
                .is_none_or(|c| parse_orig_name(&c.name).is_some())
        }),
        _ => false,
    })
}

/// The same objects read beyond the scope (the very same read: it is replaced whole).
fn same_beyond_scope(old: &Snapshot, new: &Snapshot) -> bool {
    match (&old.beyond_scope, &new.beyond_scope) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

/// The same restores, findings and `-orig` PVCs: what a reader sees (not when it was made).
fn same_content(a: &Report, b: &Report) -> bool {
    a.restores == b.restores && a.findings == b.findings && a.orig_pvcs == b.orig_pvcs
}

/// The namespaces whose restores can read something `changes` altered between `old` and `new`.
///
/// Conservative where the analysis looks across namespaces: a PV counts for the namespaces of
/// the claims that name it (its `claimRef`, before and after, and every PVC whose `volumeName`
/// it is); any object counts also for the namespaces of the copy restores that target its
/// namespace (`readers_across`); a Velero Restore or DataDownload (kept in Velero's own namespace, found by labels
/// and name prefixes) and a StorageClass or Namespace count for every namespace, as does any
/// change of health, scope or a whole kind.
fn touched(old: &Snapshot, new: &Snapshot, changes: &Changes) -> Touched {
    if changes.health || !changes.kinds.is_empty() || old.scope != new.scope {
        return Touched::All;
    }
    let mut out = BTreeSet::new();
    for (kind, key) in &changes.objects {
        match kind {
            Kind::VeleroRestore
            | Kind::DataDownload
            | Kind::VeleroBackup
            | Kind::StorageClass
            | Kind::Namespace => {
                return Touched::All;
            }
            Kind::PersistentVolume => {
                for snap in [old, new] {
                    if let Some(c) = snap
                        .pvs
                        .get("", &key.name)
                        .and_then(|pv| pv.claim_ref.as_ref())
                    {
                        out.insert(c.namespace.clone());
                    }
                }
                for pvc in new.pvcs.by_term(&volume_term(&key.name)) {
                    out.insert(pvc.meta.namespace.to_string());
                }
            }
            _ => {
                out.insert(key.namespace.to_string());
            }
        }
    }
    for ns in evicted_tombstones(&old.tombstones, &new.tombstones) {
        out.insert(ns);
    }
    let readers = readers_across(old, new, &out);
    out.extend(readers);
    Touched::Some(out)
}

/// The namespaces whose restores read objects in one of `changed` without living there: a copy
/// restore reads its disks' PVCs, DataVolumes, HelmReleases, VMs and Pods in its
/// `targetNamespace`, so a change there (a deletion above all) redoes the RestoreJob's own
/// namespace. Read from both snapshots (a RestoreJob retargeted or deleted in the batch) and
/// from the raw option, whatever the driver: redoing one namespace too many costs little, one
/// too few leaves a chain holding an object that is gone.
fn readers_across(old: &Snapshot, new: &Snapshot, changed: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for snap in [old, new] {
        for target in changed {
            // Indexed by target (`snapshot::target_term`): not a walk over every RestoreJob of
            // the cluster on every change.
            for rj in snap.restore_jobs.by_term(&target_term(target)) {
                out.push(rj.meta.namespace.to_string());
            }
        }
    }
    out
}

/// Namespaces of the tombstones that fell out of the bounded list: the analysis may have
/// leaned on them (when an object went, and who owned it).
fn evicted_tombstones(old: &Tombstones, new: &Tombstones) -> Vec<String> {
    if old.len() < Tombstones::MAX {
        return Vec::new();
    }
    // New ones are pushed at the back, old ones fall off the front: the first that survived
    // tells how many fell.
    let gone = match new.iter().next() {
        Some(first) => old.iter().position(|t| t == first).unwrap_or(old.len()),
        None => old.len(),
    };
    old.iter()
        .take(gone)
        .map(|t| t.key.namespace.to_string())
        .collect()
}
