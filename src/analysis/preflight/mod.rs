//! PURE prediction of what the backup controller will do with a RestoreJob that is not (or not
//! yet fully) there, and what would go wrong: `preflight(&Snapshot, proposed, generation)`.
//! Read fresh by the caller; nothing here does I/O or reads a clock. Predictions use the
//! finding style (code, severity, message, remedy); what cannot be told is listed as unknown,
//! never guessed.

mod postgres;
pub mod text;
mod vm;

use super::Settings;
use super::codes::Severity;
use super::controller::{ControllerGeneration, Generation};
use super::ctx::Ctx;
use super::report::{Driver, ObjRef, RestoreId, TargetRef};
use crate::model::objects::{RestoreJob, RjPhase};
use crate::model::snapshot::Snapshot;
use crate::model::{Kind, Obj};
use serde::Serialize;
use std::sync::Arc;

/// One thing the controller will do, or that would go wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Prediction {
    pub code: &'static str,
    pub severity: Severity,
    pub objects: Vec<ObjRef>,
    pub message: String,
    pub remedy: String,
    /// The action restorewatch offers, by name.
    pub action: Option<&'static str>,
}

/// What the `-orig` name of a disk is now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum OrigState {
    Free,
    /// Made by this (existing) RestoreJob: the controller resumes it.
    Ours,
    /// Held by a PVC another RestoreJob made; `by` names it as far as known.
    Taken {
        pvc_uid: String,
        by: String,
    },
    TooLong {
        length: usize,
    },
    /// The PVCs could not be read.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiskForecast {
    pub disk: String,
    pub orig: String,
    pub orig_state: OrigState,
    /// The PV the kept copy will hold, with its size and its class's reclaim policy.
    pub pv: Option<String>,
    pub capacity: Option<String>,
    pub storage_class: Option<String>,
    pub class_policy: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preflight {
    pub restore: RestoreId,
    /// The RestoreJob already exists (a resumed or finished restore of this name).
    pub exists: bool,
    pub target: Option<TargetRef>,
    pub driver: Driver,
    pub in_place: bool,
    pub controller: ControllerGeneration,
    pub disks: Vec<DiskForecast>,
    /// The sum of the kept copies' PV capacities, when every one is known.
    pub kept_bytes: Option<u64>,
    pub predictions: Vec<Prediction>,
    /// What could not be told, and why: any entry makes the answer "cannot tell".
    pub unknown: Vec<String>,
}

impl Preflight {
    /// 0 nothing found that loses or hides data, 1 something would, 2 cannot tell.
    pub fn exit_code(&self) -> i32 {
        if self
            .predictions
            .iter()
            .any(|p| p.severity == Severity::Error)
        {
            1
        } else if !self.unknown.is_empty() {
            2
        } else {
            0
        }
    }

    /// Nothing would go wrong and nothing is unknown: what `restart-restore` requires.
    pub fn is_clean(&self) -> bool {
        self.unknown.is_empty()
            && self
                .predictions
                .iter()
                .all(|p| p.severity == Severity::Info)
    }
}

pub(super) struct Out {
    predictions: Vec<Prediction>,
    unknown: Vec<String>,
    /// The RestoreJob exists and is finished: its prediction offers `restart-restore`.
    offer_restart: bool,
}

impl Out {
    fn add(
        &mut self,
        code: &'static str,
        severity: Severity,
        objects: Vec<ObjRef>,
        message: String,
        remedy: impl Into<String>,
    ) {
        self.predictions.push(Prediction {
            code,
            severity,
            objects,
            message,
            remedy: remedy.into(),
            action: None,
        });
    }

    fn unknown(&mut self, why: String) {
        self.unknown.push(why);
    }

    /// Records as unknown every kind of `kinds` the read could not list; true when all were read.
    fn readable(&mut self, snap: &Snapshot, kinds: &[Kind]) -> bool {
        let mut all = true;
        for k in kinds {
            if snap.absence_known(*k) == Some(false) {
                self.unknown(format!(
                    "{} could not be read: what they would show is unknown",
                    k.info().plural
                ));
                all = false;
            }
        }
        all
    }
}

/// What the controller will do with `proposed` (a RestoreJob as `kubectl apply` would take it;
/// the live one of the same name, when there is one, stands for it) on a cluster as `snap`
/// shows it, under the controller generation `controller`.
pub fn preflight(
    snap: &Snapshot,
    proposed: &Arc<Obj<RestoreJob>>,
    controller: ControllerGeneration,
) -> Preflight {
    let ns = proposed.meta.namespace.as_str();
    let name = proposed.meta.name.as_str();
    let live = snap.restore_jobs.get(ns, name);
    let rj = live.unwrap_or(proposed);
    let settings = Settings::default();
    let ctx = Ctx::new(snap, &settings, jiff::Timestamp::UNIX_EPOCH, rj);
    let mut out = Out {
        predictions: Vec::new(),
        unknown: Vec::new(),
        offer_restart: false,
    };
    out.readable(snap, &[Kind::RestoreJob, Kind::Backup]);
    if let Some(l) = live {
        existing(l, &mut out);
    }
    match (&rj.backup_ref, ctx.backup) {
        (None, _) => out.unknown("the RestoreJob names no Backup (spec.backupRef.name)".into()),
        (Some(b), None) => out.unknown(format!(
            "Backup {ns}/{b} is not there: the controller would fail the RestoreJob, and nothing about the restore can be told"
        )),
        _ => {}
    }
    let mut disks = Vec::new();
    let mut kept_bytes = None;
    match ctx.driver {
        Driver::Velero => {
            let f = vm::forecast(&ctx, live.is_some(), controller.generation, &mut out);
            disks = f.disks;
            kept_bytes = f.kept_bytes;
        }
        Driver::Cnpg => postgres::forecast(&ctx, &mut out),
        Driver::Other if ctx.backup.is_some() => out.unknown(format!(
            "the Backup's strategy ({}) is not one restorewatch knows: what its driver does is unknown",
            ctx.backup
                .and_then(|b| b.strategy_ref.as_ref())
                .map_or("none", |s| s.kind.as_str())
        )),
        Driver::Other => {}
    }
    concurrent(&ctx, &mut out);
    if out.offer_restart {
        for p in out
            .predictions
            .iter_mut()
            .filter(|p| p.code == "restore-job-exists")
        {
            p.action = Some("restart-restore");
        }
    }
    out.predictions
        .sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| a.code.cmp(b.code)));
    Preflight {
        restore: ctx.id.clone(),
        exists: live.is_some(),
        target: ctx.target.clone(),
        driver: ctx.driver,
        in_place: ctx.in_place,
        controller,
        disks,
        kept_bytes,
        predictions: out.predictions,
        unknown: out.unknown,
    }
}

/// A RestoreJob of this name exists: a finished one is never run again.
fn existing(live: &Obj<RestoreJob>, out: &mut Out) {
    let r = ObjRef::new(Kind::RestoreJob, &live.meta.namespace, &live.meta.name);
    if live.phase.is_terminal() {
        out.offer_restart = true;
    }
    match &live.phase {
        RjPhase::Succeeded | RjPhase::Failed => out.add(
            "restore-job-exists",
            Severity::Warning,
            vec![r],
            format!(
                "RestoreJob {} already exists and is {}: the controller never runs a finished RestoreJob again, so applying it changes nothing",
                live.meta.name,
                live.phase.as_str()
            ),
            "restore again under a new RestoreJob name (restorewatch action restart-restore)",
        ),
        _ => out.add(
            "restore-job-running",
            Severity::Info,
            vec![r],
            format!(
                "RestoreJob {} already exists ({}): the controller resumes it; this is what it will still do",
                live.meta.name,
                match live.phase.as_str() {
                    "" => "not picked up yet",
                    p => p,
                }
            ),
            "",
        ),
    }
}

/// Another unfinished RestoreJob on the same application: the controller does not lock them.
fn concurrent(ctx: &Ctx, out: &mut Out) {
    let Some(app) = ctx.target.as_ref() else {
        return;
    };
    for other in ctx.snap.restore_jobs.in_namespace(ctx.ns) {
        if other.meta.name == ctx.rj.meta.name || other.phase.is_terminal() {
            continue;
        }
        let octx = Ctx::new(ctx.snap, ctx.settings, jiff::Timestamp::UNIX_EPOCH, other);
        if octx.target.as_ref() == Some(app) && octx.in_place == ctx.in_place {
            out.add(
                "concurrent-restores",
                Severity::Warning,
                vec![ObjRef::new(Kind::RestoreJob, ctx.ns, &other.meta.name)],
                format!(
                    "RestoreJob {} ({}) is still restoring {} {}: two restores of one application are not locked against each other",
                    other.meta.name,
                    match other.phase.as_str() {
                        "" => "not picked up yet",
                        p => p,
                    },
                    app.kind,
                    app.name
                ),
                "wait until it finishes (or delete it) before starting another",
            );
        }
    }
}

/// How a generation changes what a taken `-orig` name leads to.
pub(super) fn foreign_consequence(g: Generation) -> (Severity, &'static str) {
    match g {
        Generation::Guarded => (
            Severity::Warning,
            "the controller (guarded) will fail the RestoreJob before halting anything, naming this PVC",
        ),
        Generation::Unguarded => (
            Severity::Error,
            "the controller (unguarded) will skip keeping this disk without a word, delete its DataVolume and report Succeeded: the current disk is not kept, and the -orig name holds an older one",
        ),
        Generation::Unknown => (
            Severity::Error,
            "a guarded controller fails the RestoreJob before halting anything; an unguarded one (not ruled out: its generation is unknown) silently keeps nothing and reports Succeeded",
        ),
    }
}
