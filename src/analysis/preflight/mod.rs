//! PURE prediction of what the backup controller will do with a RestoreJob that is not (or not
//! yet fully) there, and what would go wrong: `preflight(&Snapshot, proposed, generation)`.
//! Read fresh by the caller; nothing here does I/O or reads a clock.
//!
//! One judge: the controller model (`analysis::forecast`) yields the states the restore will
//! pass through, and `analyze`, the engine `check` runs, judges each of them. Every warning
//! or error it raises there about this restore (or that the restore brings about) is a
//! prediction with the same code, message and remedy `check` would print, plus the step at
//! which it first appears and the controller branches it appears under. What only a prediction
//! can say (the names the API server or the controller would refuse, what the kept copies will
//! hold, the VM's downtime, the deadline) is added beside it. What cannot be told is listed
//! as unknown, never guessed.

mod postgres;
pub mod text;
mod vm;

use super::codes::Severity;
use super::controller::ControllerGeneration;
use super::ctx::Ctx;
use super::forecast::{self, Branch};
use super::report::{Driver, ObjRef, RestoreId, TargetRef};
use super::{Report, Settings};
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
    /// The controller's step at which the analysis first raises it (`None`: known before the
    /// restore starts, from the names and the cluster as it is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<&'static str>,
    /// The controller branches under which it happens (empty: under every one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<Branch>,
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
    /// The controller branches forecast (two when its generation is unknown).
    pub branches: Vec<Branch>,
    /// The states the restore passes through, step by step, per branch.
    pub steps: Vec<StepLine>,
}

/// One step of the forecast, as said to a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepLine {
    pub branch: Branch,
    pub step: &'static str,
    pub what: String,
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
            step: None,
            branches: Vec::new(),
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
    let names_ok = names(&ctx, live.is_some(), &mut out);
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
    let mut branches = forecast::branches(controller.generation);
    let mut steps = Vec::new();
    if names_ok {
        let fc = forecast::forecast(snap, rj, controller.generation);
        judge(snap, &ctx, &fc, &controller, &mut out);
        branches = fc.branches.clone();
        steps = fc
            .stages
            .iter()
            .map(|s| StepLine {
                branch: s.branch,
                step: s.step,
                what: s.what.clone(),
            })
            .collect();
        for u in fc.unknown {
            if !out.unknown.contains(&u) {
                out.unknown(u);
            }
        }
    }
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
        branches,
        steps,
    }
}

/// `analyze` as `check` runs it, phrased for the one generation verdict given (the forecast's
/// states carry no controller evidence of their own that `check` would not see).
fn analyze_as(snap: &Snapshot, now: jiff::Timestamp, controller: &ControllerGeneration) -> Report {
    let settings = Settings::default();
    let parts: Vec<super::NamespacePart> = super::part_namespaces(snap)
        .iter()
        .map(|ns| super::analyze_namespace(snap, &settings, now, ns, controller.generation))
        .collect();
    super::assemble(
        snap,
        &settings,
        now,
        parts.iter(),
        std::sync::Arc::new(controller.clone()),
    )
}

/// Every warning and error `analyze` raises on a forecast state about this restore, or new
/// and naming it: the same code, message and remedy, with the first step and the branches
/// where it appears.
fn judge(
    snap: &Snapshot,
    ctx: &Ctx,
    fc: &forecast::Forecast,
    controller: &ControllerGeneration,
    out: &mut Out,
) {
    let before = analyze_as(snap, fc.start, controller);
    let had: std::collections::HashSet<(&str, &[ObjRef])> = before
        .findings
        .iter()
        .map(|f| (f.code.as_str(), f.objects.as_slice()))
        .collect();
    let rj_ref = ctx.rj_ref();
    let mut found: Vec<Prediction> = Vec::new();
    for stage in &fc.stages {
        let report = analyze_as(&stage.snapshot, stage.at, controller);
        for f in report.findings.iter() {
            if f.severity == Severity::Info {
                continue;
            }
            // About this restore; or new, and naming it or no restore at all (two restores
            // at once, a cluster-wide state it brings about).
            let ours = f.restore.as_ref() == Some(&ctx.id);
            let names_it = f.restore.is_none() || f.objects.contains(&rj_ref);
            if !ours && (!names_it || had.contains(&(f.code.as_str(), f.objects.as_slice()))) {
                continue;
            }
            let code = f.code.as_str();
            match found
                .iter_mut()
                .find(|p| p.code == code && p.objects == f.objects)
            {
                Some(p) => {
                    if !p.branches.contains(&stage.branch) {
                        p.branches.push(stage.branch);
                    }
                }
                None => found.push(Prediction {
                    code,
                    severity: f.severity,
                    objects: f.objects.clone(),
                    message: f.message.clone(),
                    remedy: f.remedy.clone(),
                    action: None,
                    step: Some(stage.step),
                    branches: vec![stage.branch],
                }),
            }
        }
    }
    for p in &mut found {
        p.branches.sort();
        if p.branches == fc.branches {
            p.branches.clear();
        }
    }
    out.predictions.extend(found);
}

/// Names as the API server and the controller take them. False when the API server refuses
/// the RestoreJob itself: then nothing happens, and nothing more is forecast.
fn names(ctx: &Ctx, exists: bool, out: &mut Out) -> bool {
    use crate::model::k8s_names::{dns_label, dns_subdomain, label_value};
    if exists {
        return true;
    }
    let name = &ctx.rj.meta.name;
    let refused = dns_label("namespace", ctx.ns)
        .and_then(|_| dns_subdomain("RestoreJob name", name))
        .err();
    if let Some(e) = refused {
        out.add(
            "restore-name-invalid",
            Severity::Error,
            vec![ctx.rj_ref()],
            format!("the API server refuses this RestoreJob: {e}; nothing is restored"),
            "choose a name of lowercase letters, digits, '-' and '.', at most 253 characters",
        );
        return false;
    }
    if let Err(e) = label_value("RestoreJob name", name) {
        let (severity, step) = match ctx.driver {
            Driver::Velero => (
                Severity::Error,
                "after it has halted the VM, kept the disks under their -orig names and deleted the DataVolumes, the controller fails creating the Velero Restore and its ConfigMap (both carry the name as a label value): the application stays down with its disks only in the -orig PVCs (dumps 08-*)",
            ),
            _ => (
                Severity::Warning,
                "every object the controller labels with it is refused by the API server",
            ),
        };
        out.predictions.push(Prediction {
            code: "restore-name-not-label-value",
            severity,
            objects: vec![ctx.rj_ref()],
            message: format!("{e}: the API server accepts the RestoreJob, but {step}"),
            remedy: "choose a RestoreJob name of at most 63 characters".into(),
            action: None,
            step: (ctx.driver == Driver::Velero).then_some("velero-restore"),
            branches: Vec::new(),
        });
    }
    true
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
