//! The verdict on one restore, a function of its findings and steps: THE place the report's
//! sentence, the dashboard's summary and `serve`'s `/report` take it from, so that no screen
//! calls healthy what a finding says is broken.

use super::story::Line;
use super::story_disks::DiskStory;
use crate::analysis::{Code, Finding, RestoreView, Severity, StepId, StepState};
use serde::Serialize;

/// What a reader must know first about a restore, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Data is gone: a disk's pre-restore content was deleted, not merely left unrestored.
    DataLost,
    /// Nothing was restored: Velero skipped the disks or the restore touched nothing.
    NotRestored,
    /// The RestoreJob failed.
    Failed,
    /// An error is open; the data is still there.
    NeedsAttention,
    /// The restore is over but a warning says the application is still down.
    AppDown,
    /// Running, but stuck or stalled.
    Stuck,
    /// Running normally.
    InProgress,
    /// Succeeded, without an error, but the end state is not verified yet.
    Unverified,
    /// Succeeded and verified, no error and nothing about the application being down.
    Healthy,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::DataLost => "data-lost",
            Verdict::NotRestored => "not-restored",
            Verdict::Failed => "failed",
            Verdict::NeedsAttention => "needs-attention",
            Verdict::AppDown => "app-down",
            Verdict::Stuck => "stuck",
            Verdict::InProgress => "in-progress",
            Verdict::Unverified => "unverified",
            Verdict::Healthy => "healthy",
        }
    }

    /// Words for a summary line.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::DataLost => "data lost",
            Verdict::NotRestored => "not restored",
            Verdict::Failed => "failed",
            Verdict::NeedsAttention => "needs attention",
            Verdict::AppDown => "application still down",
            Verdict::Stuck => "stuck",
            Verdict::InProgress => "in progress",
            Verdict::Unverified => "succeeded, not verified",
            Verdict::Healthy => "healthy",
        }
    }

    /// Whether an operator has something to do.
    pub fn is_bad(self) -> bool {
        self <= Verdict::Stuck
    }
}

/// Warnings that say the application is not back, whatever the RestoreJob's phase.
const APP_DOWN: &[Code] = &[Code::HelmreleaseLeftSuspended];
/// Warnings that say a running restore does not move.
const STUCK: &[Code] = &[
    Code::RestoreStalled,
    Code::VeleroRestoreStuck,
    Code::VmHaltStuck,
    Code::PurgeStuck,
    Code::RestoreDeadlineNear,
    Code::OrigBindStuck,
];
/// The preparation steps: a restore none of which did anything touched nothing.
const TOUCHING: &[StepId] = &[
    StepId::SuspendReleases,
    StepId::HaltVm,
    StepId::KeepDisks,
    StepId::DeleteDatavolumes,
    StepId::SuspendRelease,
    StepId::PatchApp,
    StepId::Purge,
];

/// The verdict on `r` from its own findings (those whose `restore` is `r`).
pub fn of<'f>(r: &RestoreView, findings: impl IntoIterator<Item = &'f Finding>) -> Verdict {
    let findings: Vec<&Finding> = findings.into_iter().collect();
    let has = |codes: &[Code]| findings.iter().any(|f| codes.contains(&f.code));
    if !lost_disks(r, &findings).is_empty() {
        return Verdict::DataLost;
    }
    if has(&[Code::DiskNotRestored, Code::VeleroRestoreStale]) {
        return Verdict::NotRestored;
    }
    if r.phase == "Failed" {
        return Verdict::Failed;
    }
    if findings.iter().any(|f| f.severity == Severity::Error) {
        return Verdict::NeedsAttention;
    }
    if has(APP_DOWN) {
        return Verdict::AppDown;
    }
    if !r.terminal {
        let failed_step = r
            .current_step()
            .is_some_and(|s| s.state == StepState::Failed);
        return if failed_step || has(STUCK) {
            Verdict::Stuck
        } else {
            Verdict::InProgress
        };
    }
    if r.phase == "Succeeded" && verified(r) {
        Verdict::Healthy
    } else if r.phase == "Succeeded" {
        Verdict::Unverified
    } else {
        Verdict::Failed
    }
}

/// The last step of the restore's driver is done: for a VM restore `verify` (HelmReleases
/// resumed, disks back and refilled, VM running), for Postgres `complete` after `healthy`. A
/// driver restorewatch does not model has no step that checks anything: never verified.
fn verified(r: &RestoreView) -> bool {
    let last = match r.driver {
        crate::analysis::Driver::Other => return false,
        _ => r
            .steps
            .iter()
            .find(|s| s.id == StepId::Verify)
            .or_else(|| r.steps.last()),
    };
    last.is_some_and(|s| s.state == StepState::Done)
}

/// Whether any preparation step did something (a VMDisk restore of the release before the
/// fixes, or a predecessor's Velero Restore, touch nothing).
fn touched(r: &RestoreView) -> bool {
    r.steps
        .iter()
        .any(|s| TOUCHING.contains(&s.id) && matches!(s.state, StepState::Done | StepState::Failed))
}

/// Disks whose pre-restore content is gone: `disk-not-kept` where the pre-restore PVC no longer
/// exists (deleted or being deleted, or replaced by a PVC made after the restore began). A
/// disk not kept whose original PVC is still there was skipped by Velero: not restored, not
/// lost.
fn lost_disks<'r>(r: &'r RestoreView, findings: &[&Finding]) -> Vec<&'r str> {
    let named: Vec<&str> = findings
        .iter()
        .filter(|f| f.code == Code::DiskNotKept)
        .flat_map(|f| &f.objects)
        .filter(|o| o.kind == crate::model::Kind::PersistentVolumeClaim)
        .map(|o| o.name.as_str())
        .collect();
    let began = r.started_at.or(r.created);
    r.disks
        .iter()
        .filter(|d| named.contains(&d.disk.as_str()))
        .filter(|d| match &d.pvc {
            None => true,
            Some(p) => p.deleting || matches!((p.created, began), (Some(c), Some(b)) if c >= b),
        })
        .map(|d| d.disk.as_str())
        .collect()
}

fn names(disks: &[&str]) -> Line {
    let mut l = Line::default();
    for (i, d) in disks.iter().enumerate() {
        if i > 0 {
            l = l.say(", ");
        }
        l = l.val(*d);
    }
    l
}

fn join(mut a: Line, b: Line) -> Line {
    a.0.extend(b.0);
    a
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// The one sentence of the report: the verdict's words, then what it rests on.
pub fn sentence(r: &RestoreView, findings: &[Finding], disks: &[DiskStory]) -> Line {
    let refs: Vec<&Finding> = findings.iter().collect();
    let verdict = of(r, refs.iter().copied());
    let first_of = |codes: &[Code]| refs.iter().find(|f| codes.contains(&f.code)).copied();
    let errors: Vec<&Finding> = refs
        .iter()
        .copied()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    match verdict {
        Verdict::DataLost => {
            let lost = lost_disks(r, &refs);
            join(
                Line::ours(format!(
                    "data lost: {}",
                    plural(lost.len(), "disk ", "disks ")
                )),
                names(&lost),
            )
            .say(" not kept and the pre-restore PVC is gone")
        }
        Verdict::NotRestored => {
            let not: Vec<&str> = refs
                .iter()
                .filter(|f| f.code == Code::DiskNotRestored)
                .flat_map(|f| &f.objects)
                .filter(|o| o.kind == crate::model::Kind::PersistentVolumeClaim)
                .map(|o| o.name.as_str())
                .collect();
            let l = if not.is_empty() {
                Line::ours("not restored")
            } else {
                join(
                    Line::ours(format!(
                        "not restored: {}",
                        plural(not.len(), "disk ", "disks ")
                    )),
                    names(&not),
                )
            };
            let l = if !touched(r) {
                l.say(": nothing was touched, the pre-restore content is still there")
            } else if !not.is_empty() {
                l.say(plural(
                    not.len(),
                    " still holds its pre-restore content",
                    " still hold their pre-restore content",
                ))
            } else {
                l
            };
            if r.phase == "Succeeded" {
                l.say(" although the RestoreJob succeeded")
            } else {
                l
            }
        }
        Verdict::Failed | Verdict::NeedsAttention if !errors.is_empty() => {
            // The error with a repair first: it is the one to act on, the others often follow.
            let first = errors
                .iter()
                .find(|f| f.action.is_some())
                .or(errors.first())
                .copied();
            let more = match errors.len() {
                1 => String::new(),
                2 => " (and 1 more error)".into(),
                n => format!(" (and {} more errors)", n - 1),
            };
            let lead = if verdict == Verdict::Failed {
                "failed, and needs attention: "
            } else {
                "needs attention: "
            };
            match first {
                Some(f) => Line::ours(lead)
                    .val(f.code.as_str())
                    .say(": ")
                    .prose(&f.message)
                    .say(more),
                None => Line::ours(lead),
            }
        }
        Verdict::Failed => {
            let l = Line::ours("failed");
            match &r.message {
                Some(m) => l.say(": ").prose(m),
                None => l,
            }
        }
        Verdict::NeedsAttention => Line::ours("needs attention"),
        Verdict::AppDown => {
            let l = Line::ours(format!(
                "{}, but the application is still down: ",
                phase_word(r).to_lowercase()
            ));
            match first_of(APP_DOWN) {
                Some(f) => l.val(f.code.as_str()).say(": ").prose(&f.message),
                None => l,
            }
        }
        Verdict::Stuck => match (first_of(STUCK), r.current_step()) {
            (Some(f), _) => Line::ours("in progress, but stuck: ")
                .val(f.code.as_str())
                .say(": ")
                .prose(&f.message),
            (None, Some(s)) => Line::ours("in progress, stuck at step ")
                .val(s.id.as_str())
                .say(": ")
                .prose(&s.detail),
            (None, None) => Line::ours("in progress, stuck"),
        },
        Verdict::InProgress => match r.current_step() {
            Some(s) => Line::ours("in progress at step ").val(s.id.as_str()),
            None => Line::ours("in progress"),
        },
        Verdict::Unverified => {
            let unproven: Vec<&str> = disks
                .iter()
                .filter(|d| !d.proven)
                .map(|d| d.disk.as_str())
                .collect();
            let open = r
                .steps
                .iter()
                .find(|s| s.id == StepId::Verify && s.state != StepState::Done);
            match (open, unproven.is_empty()) {
                (Some(s), _) if !s.detail.is_empty() => {
                    Line::ours("succeeded, not verified yet: ").prose(&s.detail)
                }
                (_, false) => join(
                    Line::ours("succeeded, but not proven restored: "),
                    names(&unproven),
                ),
                _ => Line::ours("succeeded, not verified yet"),
            }
        }
        Verdict::Healthy => {
            let unproven: Vec<&str> = disks
                .iter()
                .filter(|d| !d.proven)
                .map(|d| d.disk.as_str())
                .collect();
            if disks.is_empty() {
                Line::ours("healthy: the RestoreJob succeeded and no finding is open")
            } else if unproven.is_empty() {
                Line::ours("healthy: every disk proven restored")
            } else {
                // Verified end state; what the -orig screen would need to reclaim is not there.
                join(
                    Line::ours("healthy, but the copy is not proven restored for "),
                    names(&unproven),
                )
                .say(" (keep its -orig PVC)")
            }
        }
    }
}

fn phase_word(r: &RestoreView) -> &str {
    match r.phase.as_str() {
        "" => "new",
        p => p,
    }
}
