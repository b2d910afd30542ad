//! The nine steps of a VM restore, read from the state of its objects.

use super::ctx::{Ctx, fmt_bytes};
use super::disks::{Disk, Rename, downloads, kind_observed, progress_of};
use super::report::{Progress, Step, StepId, StepState, step};
use super::vm::{Past, half_done_settled, past, vm_releases};
use crate::model::Kind;
use crate::model::Obj;
use crate::model::objects::{RjPhase, VeleroRestore as VeleroRestoreSpec};

type VeleroRestore = Obj<VeleroRestoreSpec>;

use StepState::*;

pub(super) fn steps(ctx: &Ctx, disks: &[Disk], unknown: Option<&str>, keeps: bool) -> Vec<Step> {
    let rj = ctx.rj;
    let succeeded = rj.phase == RjPhase::Succeeded;
    let failed = rj.phase == RjPhase::Failed;
    let past = past(ctx, disks);
    let mut steps = Vec::with_capacity(9);
    // The controller took a predecessor's Velero Restore for this one's: it prepared nothing
    // and restored nothing, so no step is credited with what that Restore did.
    if let Some(old) = ctx.stale_velero {
        steps.extend(stale_steps(ctx, old));
        return steps;
    }

    let (validate, validated) = super::common::validate_step(ctx);
    steps.push(validate);

    // suspend-releases
    let releases = vm_releases(ctx, disks);
    let hrs: Vec<_> = releases
        .iter()
        .filter_map(|n| ctx.snap.helm_releases.get(ctx.ns, n))
        .collect();
    let suspended = hrs
        .iter()
        .filter(|h| h.is_suspended() == Some(true))
        .count();
    let copy = !ctx.in_place;
    let kept_dvs = dvs_never_deleted(ctx, disks);
    let never_suspended = never_suspended(ctx, &releases, &hrs, kept_dvs.is_some());
    let st = if copy {
        step(
            StepId::SuspendReleases,
            Skipped,
            "copy restore: the source application keeps running",
        )
    } else if !validated {
        step(StepId::SuspendReleases, Pending, "")
    } else if let Some(why) = never_suspended {
        step(StepId::SuspendReleases, Skipped, why)
    } else if succeeded || past.any() {
        step(
            StepId::SuspendReleases,
            Done,
            format!("{} HelmReleases", releases.len()),
        )
    } else if !hrs.is_empty() && suspended == hrs.len() {
        step(
            StepId::SuspendReleases,
            Done,
            format!("{suspended}/{} suspended", hrs.len()),
        )
    } else {
        step(
            StepId::SuspendReleases,
            Active,
            format!("{suspended}/{} suspended", hrs.len()),
        )
    };
    let suspend_done = st.state == Done;
    steps.push(st);

    // halt-vm
    let vm_name = ctx.vm_name();
    let vm = vm_name.as_deref().and_then(|n| ctx.snap.vms.get(ctx.ns, n));
    let vmi = vm_name
        .as_deref()
        .and_then(|n| ctx.snap.vmis.get(ctx.ns, n));
    let halted = vm.is_some_and(|v| v.run_strategy.as_deref() == Some("Halted"));
    let st = if copy {
        step(
            StepId::HaltVm,
            Skipped,
            "copy restore: the VM is not touched",
        )
    } else if ctx.target_kind() == Some("VMDisk") {
        step(StepId::HaltVm, Skipped, "VMDisk restore: no VM to halt")
    } else if !suspend_done {
        step(StepId::HaltVm, Pending, "")
    } else if succeeded || past.velero || (past.any() && vmi.is_none()) {
        step(StepId::HaltVm, Done, "VM halted")
    } else if halted && vmi.is_none() {
        step(
            StepId::HaltVm,
            Done,
            format!("{} halted, VMI gone", vm_name.unwrap_or_default()),
        )
    } else if let Some(vmi) = vmi {
        let phase = vmi.phase.display();
        let detail = if halted {
            format!(
                "waiting for VMI {} to shut down (phase {phase})",
                vmi.meta.name
            )
        } else {
            format!(
                "VMI {} still running (phase {phase}), runStrategy not Halted",
                vmi.meta.name
            )
        };
        step(StepId::HaltVm, if failed { Failed } else { Active }, detail)
    } else if vm.is_none() && kind_observed(ctx.snap, Kind::VirtualMachine) {
        step(
            StepId::HaltVm,
            Done,
            format!("no VM {}", vm_name.unwrap_or_default()),
        )
    } else {
        step(StepId::HaltVm, Active, "halting the VM")
    };
    let halt_done = matches!(st.state, Done | Skipped);
    steps.push(st);

    // keep-disks
    let keep = ctx.keep_original();
    let st = if !ctx.in_place {
        step(
            StepId::KeepDisks,
            Skipped,
            "copy restore: current disks are not touched",
        )
    } else if !keeps {
        step(
            StepId::KeepDisks,
            Skipped,
            "the Backup records no disk: the controller keeps no copy",
        )
    } else if keep == Some(false) {
        step(StepId::KeepDisks, Skipped, "keepOriginalPVC: false")
    } else if keep.is_none() {
        step(
            StepId::KeepDisks,
            if failed { Failed } else { Active },
            "keepOriginalPVC unreadable",
        )
    } else if let Some(why) = unknown {
        step(
            StepId::KeepDisks,
            if halt_done { Active } else { Pending },
            why,
        )
    } else {
        keep_disks_step(ctx, disks, halt_done, &past)
    };
    let keep_done = matches!(st.state, Done | Skipped | Failed);
    steps.push(st);

    // delete-datavolumes
    let deleted = disks.iter().filter(|d| d.dv.is_none()).count();
    let dv_visible = kind_observed(ctx.snap, Kind::DataVolume);
    let st = if copy {
        step(
            StepId::DeleteDatavolumes,
            Skipped,
            "copy restore: the DataVolumes stay",
        )
    } else if let Some(why) = kept_dvs {
        step(StepId::DeleteDatavolumes, Skipped, why)
    } else if past.velero || succeeded {
        step(
            StepId::DeleteDatavolumes,
            Done,
            if unknown.is_some() {
                "before the Velero Restore (disks unknown)".to_string()
            } else {
                format!("{} DataVolumes", disks.len())
            },
        )
    } else if let Some(why) = unknown {
        step(
            StepId::DeleteDatavolumes,
            if keep_done && halt_done && !failed {
                Active
            } else {
                Pending
            },
            why,
        )
    } else if dv_visible && !disks.is_empty() && deleted == disks.len() {
        step(
            StepId::DeleteDatavolumes,
            Done,
            format!("{deleted} deleted"),
        )
    } else if dv_visible && deleted > 0 {
        step(
            StepId::DeleteDatavolumes,
            Active,
            format!("{deleted}/{} deleted", disks.len()),
        )
    } else if keep_done && halt_done && !failed {
        step(StepId::DeleteDatavolumes, Active, "")
    } else {
        step(StepId::DeleteDatavolumes, Pending, "")
    };
    steps.push(st);

    // velero-restore
    let st = match ctx.velero {
        None => step(StepId::VeleroRestore, Pending, ""),
        Some(v) => {
            let phase = v.phase.display();
            let items = match (v.items_restored, v.total_items) {
                (Some(d), Some(t)) => format!(", {d}/{t} items"),
                _ => String::new(),
            };
            match v.phase.as_deref() {
                Some("Completed") => step(
                    StepId::VeleroRestore,
                    Done,
                    format!("{} Completed{items}", v.meta.name),
                ),
                Some("Failed" | "PartiallyFailed") => {
                    let why = v
                        .failure_reason
                        .clone()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default();
                    step(
                        StepId::VeleroRestore,
                        Failed,
                        format!("{} {phase}{why}", v.meta.name),
                    )
                }
                Some("FailedValidation") => step(
                    StepId::VeleroRestore,
                    Failed,
                    format!(
                        "{} FailedValidation: {} (the controller keeps waiting)",
                        v.meta.name,
                        v.validation_errors.join("; ")
                    ),
                ),
                _ => step(
                    StepId::VeleroRestore,
                    Active,
                    format!("{} {phase}{items}", v.meta.name),
                ),
            }
        }
    };
    steps.push(st);

    // data-download
    steps.push(match unknown {
        Some(why) if ctx.velero.is_some() => step(StepId::DataDownload, Active, why),
        _ => download_step(ctx, disks, succeeded),
    });

    // complete
    let restored = steps
        .iter()
        .any(|s| s.id == StepId::DataDownload && s.state == Done)
        && steps
            .iter()
            .any(|s| s.id == StepId::VeleroRestore && s.state == Done);
    steps.push(match &rj.phase {
        RjPhase::Succeeded => step(
            StepId::Complete,
            Done,
            rj.completed_at
                .known()
                .map(|t| format!("Succeeded {t}"))
                .unwrap_or_else(|| "Succeeded".into()),
        ),
        RjPhase::Failed => step(
            StepId::Complete,
            Failed,
            rj.message.clone().unwrap_or_else(|| "Failed".into()),
        ),
        _ if restored => step(
            StepId::Complete,
            Active,
            "waiting for the controller to mark it Succeeded",
        ),
        _ => step(StepId::Complete, Pending, ""),
    });

    // verify
    steps.push(if succeeded {
        let mut s = verify_step(ctx, disks, &releases);
        if let Some(why) = unknown
            && s.state == Done
        {
            s = step(StepId::Verify, Active, why);
        }
        s
    } else if failed {
        step(StepId::Verify, Skipped, "restore failed")
    } else {
        step(StepId::Verify, Pending, "")
    });
    steps
}

/// Why the controller is known not to have deleted the disks' DataVolumes although it went
/// on to Velero: every one is still the DataVolume that existed before the RestoreJob (Velero
/// re-creates a deleted one, newer). What the release before the fixes does for a VMDisk.
fn dvs_never_deleted(ctx: &Ctx, disks: &[Disk]) -> Option<String> {
    let went_on = ctx.velero.is_some() || ctx.rj.phase == RjPhase::Succeeded;
    if !went_on || disks.is_empty() || !kind_observed(ctx.snap, Kind::DataVolume) {
        return None;
    }
    let rj_created = ctx.rj.meta.created?;
    let all_older = disks.iter().all(|d| {
        d.dv.and_then(|dv| dv.meta.created)
            .is_some_and(|c| c < rj_created)
    });
    all_older.then(|| {
        format!(
            "not done: DataVolume {} still the one from before the restore: the controller never deleted it",
            disks
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Why the controller is known not to have suspended the HelmReleases, when the objects say
/// so: none is suspended, none was re-applied by Velero, no event says it suspended one, and
/// either their managedFields show no write since the RestoreJob was created or the DataVolumes
/// the controller deletes right after suspending were never deleted.
fn never_suspended(
    ctx: &Ctx,
    releases: &[String],
    hrs: &[&std::sync::Arc<Obj<crate::model::objects::HelmRelease>>],
    dvs_kept: bool,
) -> Option<String> {
    if releases.is_empty() || hrs.len() != releases.len() {
        return None;
    }
    let rj_created = ctx.rj.meta.created?;
    let untouched = hrs.iter().all(|h| {
        let event = ctx.events.iter().any(|e| {
            e.message
                .as_deref()
                .is_some_and(|m| m.contains("Suspended") && super::ctx::mentions(m, &h.meta.name))
        });
        let unchanged =
            !h.meta.managed.is_empty() && h.meta.last_change.is_some_and(|t| t < rj_created);
        h.is_suspended() == Some(false)
            && h.meta
                .label(crate::model::names::LABEL_VELERO_RESTORE_NAME)
                .is_none()
            && !event
            && (unchanged || dvs_kept)
    });
    untouched.then(|| {
        format!(
            "not done: HelmRelease {} never suspended (no Suspended event, unchanged since before the restore)",
            releases.join(", ")
        )
    })
}

/// Every step of a restore whose only Velero Restore predates it (see `Ctx::stale_velero`).
fn stale_steps(ctx: &Ctx, old: &VeleroRestore) -> Vec<Step> {
    let rj = ctx.rj;
    let (validate, _) = super::common::validate_step(ctx);
    let whose = stale_restore_text(ctx, old);
    let skipped = |id| {
        step(
            id,
            Skipped,
            "not done: the controller found a Velero Restore and skipped the preparation",
        )
    };
    let mut steps = vec![
        validate,
        skipped(StepId::SuspendReleases),
        skipped(StepId::HaltVm),
        skipped(StepId::KeepDisks),
        skipped(StepId::DeleteDatavolumes),
        step(StepId::VeleroRestore, Failed, whose.clone()),
        step(
            StepId::DataDownload,
            Failed,
            "none of this restore: nothing was restored",
        ),
    ];
    steps.push(match &rj.phase {
        RjPhase::Succeeded => step(
            StepId::Complete,
            Failed,
            "Succeeded, with nothing restored (the Velero Restore is a predecessor's)",
        ),
        RjPhase::Failed => step(
            StepId::Complete,
            Failed,
            rj.message.clone().unwrap_or_else(|| "Failed".into()),
        ),
        _ => step(StepId::Complete, Pending, ""),
    });
    steps.push(if rj.phase == RjPhase::Failed {
        step(StepId::Verify, Skipped, "restore failed")
    } else {
        step(
            StepId::Verify,
            Failed,
            format!("nothing was restored: {whose}"),
        )
    });
    steps
}

/// "tenant-a.restore-test-x7k2p (Completed) was created 2d4h before this RestoreJob, by a
/// deleted RestoreJob of the same name".
pub(super) fn stale_restore_text(ctx: &Ctx, old: &VeleroRestore) -> String {
    let age = match (old.meta.created, ctx.rj.meta.created) {
        (Some(o), Some(r)) => format!("{} ", super::ctx::human(r.duration_since(o))),
        _ => String::new(),
    };
    format!(
        "Velero Restore {} ({}) was created {age}before this RestoreJob, by a deleted RestoreJob of the same name",
        old.meta.name,
        old.phase.display()
    )
}

fn keep_disks_step(ctx: &Ctx, disks: &[Disk], halt_done: bool, past: &Past) -> Step {
    let mut problems = Vec::new();
    let mut kept = 0;
    let mut waiting = 0;
    let mut binding = Vec::new();
    for d in disks {
        match &d.rename {
            Rename::Complete => kept += 1,
            Rename::AwaitingBind(since) => {
                waiting += 1;
                binding.push(awaiting_bind_detail(ctx, d, *since));
            }
            Rename::Foreign => problems.push(format!(
                "{}: -orig name {} held by another RestoreJob's PVC",
                d.name, d.orig_name
            )),
            Rename::Unknown => problems.push(format!(
                "{}: -orig PVC {} of unknown origin",
                d.name, d.orig_name
            )),
            Rename::HalfDone(why) => {
                if half_done_settled(ctx, d, past) {
                    problems.push(format!("{}: {}", d.name, why.join(", ")));
                } else {
                    waiting += 1;
                }
            }
            Rename::NotStarted => {
                let nothing_to_keep = d.pvc.is_none_or(|p| {
                    p.phase.as_deref() != Some("Bound") || p.meta.created > ctx.rj.meta.created
                });
                if (past.dv_deleted || past.velero || ctx.terminal()) && !nothing_to_keep {
                    problems.push(format!("{}: not kept", d.name));
                } else if !(past.velero || ctx.terminal()) {
                    waiting += 1;
                }
            }
        }
    }
    for d in disks {
        let users = super::vm::live_users_of_renamed(ctx, d);
        if !users.is_empty() {
            problems.push(format!(
                "{}: renamed while {} still runs on it",
                d.name,
                users.join(", ")
            ));
        }
    }
    if !problems.is_empty() {
        step(StepId::KeepDisks, Failed, problems.join("; "))
    } else if waiting == 0 {
        let detail = disks
            .iter()
            .filter(|d| d.rename == Rename::Complete)
            .map(|d| format!("{} -> {}", d.name, d.orig_name))
            .collect::<Vec<_>>()
            .join(", ");
        step(
            StepId::KeepDisks,
            Done,
            if detail.is_empty() {
                "nothing to keep".into()
            } else {
                detail
            },
        )
    } else if halt_done && (kept > 0 || disks.iter().any(|d| d.orig.is_some())) {
        let mut detail = format!("{kept}/{} kept", disks.len());
        for b in &binding {
            detail.push_str("; ");
            detail.push_str(b);
        }
        step(StepId::KeepDisks, Active, detail)
    } else {
        step(StepId::KeepDisks, Pending, "")
    }
}

/// "vm-disk-data: renamed, waiting for the PV controller to bind vm-disk-data-orig-de3e (12s)".
fn awaiting_bind_detail(ctx: &Ctx, d: &Disk, since: Option<jiff::Timestamp>) -> String {
    format!(
        "{}: renamed, waiting for the PV controller to bind {}{}",
        d.name,
        d.orig_name,
        since
            .map(|t| format!(" ({})", ctx.clock.human_since(t)))
            .unwrap_or_default()
    )
}

fn download_step(ctx: &Ctx, disks: &[Disk], succeeded: bool) -> Step {
    let Some(v) = ctx.velero else {
        return step(
            StepId::DataDownload,
            if succeeded { Skipped } else { Pending },
            if succeeded {
                "no Velero Restore visible"
            } else {
                ""
            },
        );
    };
    let all = downloads(ctx);
    let mut total = Progress { done: 0, total: 0 };
    let mut have_progress = false;
    let mut completed = 0;
    let mut failed = Vec::new();
    let mut missing = Vec::new();
    for d in disks {
        match d.download {
            Some(dd) => {
                if let Some(p) = progress_of(dd) {
                    have_progress = true;
                    total.done += p.done.min(p.total);
                    total.total += p.total;
                }
                if dd.is_completed() {
                    completed += 1;
                } else if dd.is_failed() {
                    failed.push(format!(
                        "{} {} ({})",
                        d.name,
                        dd.phase.display(),
                        dd.meta.name
                    ));
                }
            }
            None => missing.push(d.name.clone()),
        }
    }
    let bytes = if have_progress {
        let pct = total
            .percent()
            .map(|p| format!(" ({p:.0}%)"))
            .unwrap_or_default();
        format!(
            ", {} of {}{pct}",
            fmt_bytes(total.done),
            fmt_bytes(total.total)
        )
    } else {
        String::new()
    };
    let velero_done = v.is_terminal();
    let mut s = if !failed.is_empty() {
        step(StepId::DataDownload, Failed, failed.join("; "))
    } else if velero_done && !missing.is_empty() {
        step(
            StepId::DataDownload,
            Failed,
            format!("no DataDownload for {}", missing.join(", ")),
        )
    } else if completed == disks.len() && !disks.is_empty() {
        step(
            StepId::DataDownload,
            Done,
            format!("{completed}/{} completed{bytes}", disks.len()),
        )
    } else if all.is_empty() {
        step(StepId::DataDownload, Active, "waiting for DataDownloads")
    } else {
        step(
            StepId::DataDownload,
            Active,
            format!("{completed}/{} completed{bytes}", disks.len()),
        )
    };
    if have_progress {
        s.progress = Some(total);
    }
    s
}

fn verify_step(ctx: &Ctx, disks: &[Disk], releases: &[String]) -> Step {
    // A copy is verified where it was written: its own HelmReleases and VM, not the source's
    // (which an earlier in-place restore may have left suspended).
    let ns = ctx.dest_ns();
    let mut open = Vec::new();
    for r in releases {
        match ctx.snap.helm_releases.get(ns, r).map(|h| h.is_suspended()) {
            Some(Some(true)) => open.push(format!("HelmRelease {r} still suspended")),
            Some(None) => open.push(format!("HelmRelease {r} suspend unreadable")),
            _ => {}
        }
    }
    if kind_observed(ctx.snap, Kind::DataVolume) {
        for d in disks.iter().filter(|d| d.dv.is_none()) {
            open.push(format!("DataVolume {} not back", d.name));
        }
    }
    if ctx.target_kind() != Some("VMDisk") && kind_observed(ctx.snap, Kind::VirtualMachineInstance)
    {
        let vmi = ctx
            .vm_name()
            .and_then(|n| ctx.snap.vmis.get(ns, &n).map(|v| v.phase.clone()));
        match vmi.as_ref().and_then(|p| p.as_deref()) {
            Some("Running") => {}
            Some(p) => open.push(format!("VM {p}")),
            None => open.push("VM not running".into()),
        }
    }
    // What can no longer fix itself: a kept disk that is not Bound, a disk never refilled.
    let mut broken = Vec::new();
    for d in disks.iter().filter(|d| d.ours()) {
        if let Rename::AwaitingBind(since) = d.rename {
            open.push(awaiting_bind_detail(ctx, d, since));
            continue;
        }
        if let Some(o) = d.orig
            && o.phase.as_deref() != Some("Bound")
        {
            broken.push(format!("{} {}", o.meta.name, o.phase.display()));
        }
    }
    // A restored disk that is gone or going is not back, whatever filled it.
    if ctx.velero.is_some() && kind_observed(ctx.snap, Kind::PersistentVolumeClaim) {
        for d in disks.iter().filter(|d| d.download.is_some()) {
            match d.pvc {
                None => broken.push(format!("{} gone after the restore", d.name)),
                Some(p) if p.meta.deleted.is_some() => {
                    broken.push(format!("{} being deleted", d.name))
                }
                _ => {}
            }
        }
    }
    // Where Velero skipped a disk (it never overwrites an existing PVC), copies alike.
    if ctx.velero.is_some() && kind_observed(ctx.snap, Kind::DataDownload) {
        for d in disks {
            match d.download {
                None => broken.push(format!("{} not restored (no DataDownload)", d.name)),
                Some(dd) if dd.is_failed() => {
                    broken.push(format!("{} DataDownload {}", d.name, dd.phase.display()))
                }
                _ => {}
            }
        }
    }
    if !broken.is_empty() {
        broken.extend(open);
        return step(StepId::Verify, Failed, broken.join("; "));
    }
    if open.is_empty() {
        step(
            StepId::Verify,
            Done,
            "HelmReleases resumed, disks back, VM running",
        )
    } else {
        step(StepId::Verify, Active, open.join("; "))
    }
}
