//! PURE model of what the backup controller will do with a RestoreJob: from a snapshot, the
//! RestoreJob (proposed, or live and not finished) and the controller's generation, the states
//! the restore passes through, step by step, each a whole `Snapshot` with the controller's
//! writes applied. `preflight` runs `analyze` over each of them: the model says what will
//! happen, the one judge says what it means.
//!
//! Written from `reference/controller-facts.md`, the real controller's recorded runs (dumps
//! `01`-`14`: what it wrote, in which order) and its newer code (the guard before halting, the
//! VMDisk rename, the refusal of a mounted disk, `ConcurrentRestore`). Where releases differ the
//! model branches; a generation that is `unknown` yields every branch.
//!
//! What the model does not know it does not invent: Velero is assumed to complete (a Velero
//! failure is not knowable before it happens), and the CNPG forecast stops once the old Cluster
//! is purged (what the chart renders next is Flux's and CNPG's, not the controller's).

mod cnpg;
pub mod names;
mod velero;
pub mod world;

use super::controller::Generation;
use super::ctx::Ctx;
use super::report::Driver;
use crate::model::objects::RestoreJob;
use crate::model::snapshot::Snapshot;
use crate::model::{Kind, Obj};
use jiff::Timestamp;
use serde::Serialize;
use std::sync::Arc;
use world::World;

/// One release line of the controller, as far as it changes what a restore does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Branch {
    /// Before report 000's fixes (the release the real dumps were recorded with): a taken
    /// `-orig` name is skipped without a word, the DataVolume deleted anyway; a VMDisk restore
    /// touches nothing unless its Backup lists the disk; no lock between restores.
    Unguarded,
    /// With the fixes and the releases after them: every `-orig` name checked before anything
    /// is suspended, the guard annotations written, a VMDisk renamed like a VM's disk and
    /// refused while a Pod mounts it, the second of two restores of one application failed
    /// (`ConcurrentRestore`).
    Guarded,
}

impl Branch {
    pub fn as_str(self) -> &'static str {
        match self {
            Branch::Unguarded => "unguarded",
            Branch::Guarded => "guarded",
        }
    }
}

/// The branches a generation verdict leaves open.
pub fn branches(g: Generation) -> Vec<Branch> {
    match g {
        Generation::Guarded => vec![Branch::Guarded],
        Generation::Unguarded => vec![Branch::Unguarded],
        Generation::Unknown => vec![Branch::Unguarded, Branch::Guarded],
    }
}

/// One state the restore passes through.
#[derive(Clone)]
pub struct Stage {
    pub branch: Branch,
    /// The controller's step that led here (the names of the restore's steps in `check`,
    /// plus `created`, `failed` and `velero-completed`).
    pub step: &'static str,
    /// What the controller (or Velero) did at this step, in a sentence.
    pub what: String,
    pub snapshot: Snapshot,
    /// The instant of the state, for the analysis' clock.
    pub at: Timestamp,
}

#[derive(Clone)]
pub struct Forecast {
    pub branches: Vec<Branch>,
    /// In order within each branch; the branches one after the other.
    pub stages: Vec<Stage>,
    /// What the model could not tell (it stopped there).
    pub unknown: Vec<String>,
    /// When the forecast starts: the newest instant the snapshot shows.
    pub start: Timestamp,
}

/// The newest instant the snapshot shows: the forecast's writes come after it, so that an
/// object made before the RestoreJob reads as made before it.
pub fn newest_instant(snap: &Snapshot) -> Timestamp {
    let mut t = Timestamp::UNIX_EPOCH;
    for kind in Kind::all() {
        for key in snap.objects.keys(kind) {
            if let Some(m) = snap.objects.meta(kind, &key) {
                for x in [m.created, m.last_change, m.deleted].into_iter().flatten() {
                    t = t.max(x);
                }
            }
        }
    }
    for e in snap.events.iter() {
        for x in [e.last, e.first].into_iter().flatten() {
            t = t.max(x);
        }
    }
    t
}

/// What the restore will do, per branch of `generation`. `rj` is the RestoreJob to forecast:
/// when one of its name exists in `snap`, that one is what the controller runs (a finished one
/// runs no more: no stage).
pub fn forecast(snap: &Snapshot, rj: &Arc<Obj<RestoreJob>>, generation: Generation) -> Forecast {
    let start = newest_instant(snap);
    let live = snap
        .restore_jobs
        .get(&rj.meta.namespace, &rj.meta.name)
        .cloned();
    let mut out = Forecast {
        branches: branches(generation),
        stages: Vec::new(),
        unknown: Vec::new(),
        start,
    };
    if live.as_ref().is_some_and(|l| l.phase.is_terminal()) {
        return out;
    }
    let settings = super::Settings::default();
    let driver = Ctx::new(snap, &settings, start, live.as_ref().unwrap_or(rj)).driver;
    for b in out.branches.clone() {
        let mut run = Run {
            world: World::new(snap, start),
            branch: b,
            stages: Vec::new(),
            ns: rj.meta.namespace.to_string(),
            name: rj.meta.name.to_string(),
            uid: String::new(),
        };
        match &live {
            Some(l) => run.uid = l.meta.uid.to_string(),
            None => {
                run.uid = run.world.create_restore_job(rj);
                run.stage("created", "the RestoreJob is created".into());
            }
        }
        let unknown = match driver {
            Driver::Velero => velero::run(&mut run),
            Driver::Cnpg => cnpg::run(&mut run),
            Driver::Other => Some(
                "the Backup's strategy is not one the model knows: what its driver does is unknown"
                    .to_string(),
            ),
        };
        if let Some(u) = unknown
            && !out.unknown.contains(&u)
        {
            out.unknown.push(u);
        }
        out.stages.extend(run.stages);
    }
    out
}

/// One branch being played.
pub(crate) struct Run {
    pub world: World,
    pub branch: Branch,
    pub stages: Vec<Stage>,
    pub ns: String,
    pub name: String,
    pub uid: String,
}

impl Run {
    /// Records the world as it is now as the state after `step`.
    pub fn stage(&mut self, step: &'static str, what: String) {
        self.stages.push(Stage {
            branch: self.branch,
            step,
            what,
            snapshot: self.world.snap.clone(),
            at: self.world.now,
        });
    }

    /// The RestoreJob as the world holds it now.
    pub fn rj(&self) -> Option<Arc<Obj<RestoreJob>>> {
        self.world
            .snap
            .restore_jobs
            .get(&self.ns, &self.name)
            .cloned()
    }

    /// The controller fails the RestoreJob with `message` at `step`.
    pub fn fail(&mut self, step: &'static str, message: String) {
        let (ns, name) = (self.ns.clone(), self.name.clone());
        self.world.set_phase(
            &ns,
            &name,
            crate::model::objects::RjPhase::Failed,
            Some(message.clone()),
        );
        self.stage(
            step,
            format!("the controller fails the RestoreJob: {message}"),
        );
    }

    pub fn running(&mut self) {
        let (ns, name) = (self.ns.clone(), self.name.clone());
        let phase = self.rj().map(|r| r.phase.clone());
        if phase != Some(crate::model::objects::RjPhase::Running) {
            self.world
                .set_phase(&ns, &name, crate::model::objects::RjPhase::Running, None);
        }
    }
}

/// The first unfinished RestoreJob of the same application in the namespace that goes before
/// this one under the newer controller's lock: a started one before one that is not, then
/// the older, then by name.
pub(crate) fn restore_ahead(snap: &Snapshot, rj: &Arc<Obj<RestoreJob>>) -> Option<String> {
    let settings = super::Settings::default();
    let me = Ctx::new(snap, &settings, Timestamp::UNIX_EPOCH, rj);
    let target = me.target.clone()?;
    let started = |r: &Obj<RestoreJob>| {
        r.started_at.is_known() || r.phase == crate::model::objects::RjPhase::Running
    };
    let goes_first = |a: &Obj<RestoreJob>, b: &Obj<RestoreJob>| {
        if started(a) != started(b) {
            return started(a);
        }
        match (a.meta.created, b.meta.created) {
            (Some(x), Some(y)) if x != y => x < y,
            _ => a.meta.name < b.meta.name,
        }
    };
    let mut first: Option<&Arc<Obj<RestoreJob>>> = None;
    for other in snap.restore_jobs.in_namespace(me.ns) {
        if other.meta.name == rj.meta.name
            || other.phase.is_terminal()
            || other.meta.deleted.is_some()
            || !goes_first(other, rj)
        {
            continue;
        }
        let o = Ctx::new(snap, &settings, Timestamp::UNIX_EPOCH, other);
        if o.target.as_ref() == Some(&target) && first.is_none_or(|f| goes_first(other, f)) {
            first = Some(other);
        }
    }
    first.map(|f| f.meta.name.to_string())
}

#[cfg(test)]
mod tests;
