//! In-place (and copy) VM restores through the Velero driver: steps and findings.

use super::codes::Code;
use super::ctx::{Ctx, fmt_bytes, human};
use super::disks::{
    Disk, Rename, build_disks, downloads, kind_observed, kind_present, progress_of,
};
use super::emit::Findings;
use super::report::{ObjRef, Progress, Step, StepId, StepState};
use crate::model::Kind;
use crate::model::names::{vm_disk_name, vm_instance_release};
use crate::model::objects::RjPhase;

use StepState::*;

pub struct VmOutcome<'a> {
    pub steps: Vec<Step>,
    pub disks: Vec<Disk<'a>>,
}

use super::report::step;

/// The HelmReleases a VM restore suspends.
pub fn vm_releases(ctx: &Ctx, disks: &[Disk]) -> Vec<String> {
    let mut out = Vec::new();
    match (ctx.target_kind(), ctx.app()) {
        (Some("VMDisk"), Some(app)) => out.push(vm_disk_name(app)),
        (_, Some(app)) => {
            out.push(vm_instance_release(app));
            out.extend(disks.iter().map(|d| d.name.clone()));
        }
        _ => {}
    }
    out
}

pub fn analyze_vm<'a>(ctx: &Ctx<'a>, out: &mut Findings) -> VmOutcome<'a> {
    let disks = build_disks(ctx);
    let steps = steps(ctx, &disks);
    findings(ctx, &disks, out);
    VmOutcome { steps, disks }
}

/// Evidence that the restore went past the halt step.
struct Past {
    renamed: bool,
    dv_deleted: bool,
    velero: bool,
}

impl Past {
    fn any(&self) -> bool {
        self.renamed || self.dv_deleted || self.velero
    }
}

fn past(ctx: &Ctx, disks: &[Disk]) -> Past {
    Past {
        renamed: disks.iter().any(|d| d.ours()),
        // All of them: one DataVolume missing before the restore is no evidence it went on.
        dv_deleted: kind_observed(ctx.snap, Kind::DataVolume)
            && !disks.is_empty()
            && disks.iter().all(|d| d.dv.is_none()),
        velero: ctx.velero.is_some(),
    }
}

fn steps(ctx: &Ctx, disks: &[Disk]) -> Vec<Step> {
    let rj = ctx.rj;
    let succeeded = rj.phase == RjPhase::Succeeded;
    let failed = rj.phase == RjPhase::Failed;
    let past = past(ctx, disks);
    let mut steps = Vec::with_capacity(9);

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
    let st = if copy {
        step(
            StepId::SuspendReleases,
            Skipped,
            "copy restore: the source application keeps running",
        )
    } else if !validated {
        step(StepId::SuspendReleases, Pending, "")
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
    } else if ctx.target_kind() == Some("VMDisk") {
        step(
            StepId::KeepDisks,
            Skipped,
            "VMDisk restore: the controller keeps no copy",
        )
    } else if keep == Some(false) {
        step(StepId::KeepDisks, Skipped, "keepOriginalPVC: false")
    } else if keep.is_none() {
        step(
            StepId::KeepDisks,
            if failed { Failed } else { Active },
            "keepOriginalPVC unreadable",
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
    } else if past.velero || succeeded {
        step(
            StepId::DeleteDatavolumes,
            Done,
            format!("{} DataVolumes", disks.len()),
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
    steps.push(download_step(ctx, disks, succeeded));

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
        verify_step(ctx, disks, &releases)
    } else if failed {
        step(StepId::Verify, Skipped, "restore failed")
    } else {
        step(StepId::Verify, Pending, "")
    });
    steps
}

fn keep_disks_step(ctx: &Ctx, disks: &[Disk], halt_done: bool, past: &Past) -> Step {
    let mut problems = Vec::new();
    let mut kept = 0;
    let mut waiting = 0;
    for d in disks {
        match &d.rename {
            Rename::Complete => kept += 1,
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
        step(
            StepId::KeepDisks,
            Active,
            format!("{kept}/{} kept", disks.len()),
        )
    } else {
        step(StepId::KeepDisks, Pending, "")
    }
}

/// A rename in progress is not a half-done one: it counts as stopped once the restore moved
/// on, finished, or the `-orig` PVC is older than the grace period.
fn half_done_settled(ctx: &Ctx, d: &Disk, past: &Past) -> bool {
    ctx.terminal()
        || past.velero
        || (past.dv_deleted && d.dv.is_none())
        || d.orig.is_some_and(|o| {
            ctx.older_than(
                o.meta.created.or(o.meta.last_change),
                ctx.settings.rename_grace,
            )
        })
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
    let mut open = Vec::new();
    for r in releases {
        match ctx
            .snap
            .helm_releases
            .get(ctx.ns, r)
            .map(|h| h.is_suspended())
        {
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
            .and_then(|n| ctx.snap.vmis.get(ctx.ns, &n).map(|v| v.phase.clone()));
        match vmi.as_ref().and_then(|p| p.as_deref()) {
            Some("Running") => {}
            Some(p) => open.push(format!("VM {p}")),
            None => open.push("VM not running".into()),
        }
    }
    // What can no longer fix itself: a kept disk that is not Bound, a disk never refilled.
    let mut broken = Vec::new();
    for d in disks.iter().filter(|d| d.ours()) {
        if let Some(o) = d.orig
            && o.phase.as_deref() != Some("Bound")
        {
            broken.push(format!("{} {}", o.meta.name, o.phase.display()));
        }
    }
    if ctx.in_place && ctx.velero.is_some() && kind_present(ctx.snap, Kind::DataDownload) {
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

fn pvc_ref(ns: &str, name: &str) -> ObjRef {
    ObjRef::new(Kind::PersistentVolumeClaim, ns, name)
}

fn findings(ctx: &Ctx, disks: &[Disk], out: &mut Findings) {
    let snap = ctx.snap;
    let id = Some(&ctx.id);
    let rj = ctx.rj;
    let terminal = ctx.terminal();
    let vm_instance_in_place = ctx.in_place && ctx.is_vm_instance();
    let keep = ctx.keep_original();
    let past = past(ctx, disks);

    if vm_instance_in_place && keep == Some(false) && !terminal {
        out.push(
            snap,
            Code::KeepOriginalDisabled,
            id,
            vec![ctx.rj_ref()],
            format!(
                "{} restores {} in place with keepOriginalPVC: false: its current disks ({}) will be replaced without a copy",
                rj.meta.name,
                ctx.app().unwrap_or("?"),
                disks.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
            "If the current data may be needed, delete this RestoreJob before it halts the VM and create one without keepOriginalPVC: false".into(),
        );
    }

    for d in disks {
        if vm_instance_in_place
            && keep != Some(false)
            && d.orig_name.len() > crate::model::names::MAX_NAME_LEN
        {
            out.push(
                snap,
                Code::OrigNameTooLong,
                id,
                vec![ctx.rj_ref(), pvc_ref(ctx.ns, &d.name)],
                format!("the -orig name of {} is {} characters long (limit 253): the controller cannot create it and the disk will not be kept", d.name, d.orig_name.len()),
                "A shorter RestoreJob name does not help (the suffix has a fixed length): the disk name itself is too long. Copy the data elsewhere first, then restore with keepOriginalPVC: false".into(),
            );
        }
        if !(vm_instance_in_place && keep == Some(true)) {
            continue;
        }
        match &d.rename {
            Rename::Foreign if !terminal => {
                let orig = d.orig.map(|o| &**o);
                let whose = match &d.ownership {
                    Some(super::report::Ownership::Foreign { other_uid: Some(u) }) => format!(
                        "it carries restore-job-uid {u}, not this RestoreJob's {}",
                        rj.meta.uid
                    ),
                    _ => format!(
                        "it has no restore-job-uid annotation and was created {} before this RestoreJob",
                        match (orig.and_then(|o| o.meta.created), rj.meta.created) {
                            (Some(o), Some(r)) => human(r.duration_since(o)),
                            _ => "?".into(),
                        }
                    ),
                };
                out.push(
                    snap,
                    Code::OrigPvcForeign,
                    id,
                    vec![pvc_ref(ctx.ns, &d.orig_name), ctx.rj_ref()],
                    format!(
                        "{} would keep {} as {}, but that name is held by a PVC this RestoreJob did not create ({whose}); a controller before the fix skips the rename and the current disk is lost, a fixed one fails the restore",
                        rj.meta.name, d.name, d.orig_name
                    ),
                    format!(
                        "Delete this RestoreJob before it halts the VM; then either reclaim the stale {} (check its content first: it may be the only copy of an older disk) or re-create the restore under another name",
                        d.orig_name
                    ),
                );
            }
            Rename::HalfDone(why) if half_done_settled(ctx, d, &past) => {
                let mut objects = vec![pvc_ref(ctx.ns, &d.orig_name)];
                if let Some(pv) = d.orig_pv {
                    objects.push(ObjRef::new(Kind::PersistentVolume, "", &pv.meta.name));
                }
                if d.pvc.is_some() {
                    objects.push(pvc_ref(ctx.ns, &d.name));
                }
                out.push(
                    snap,
                    Code::RenameHalfDone,
                    id,
                    objects,
                    format!("the rename of {} to {} stopped halfway: {}", d.name, d.orig_name, why.join(", ")),
                    "Finish the rename with the resume-rename action (it deletes the original PVC only while it still claims the PV, then points the PV's claimRef at the -orig PVC)".into(),
                );
            }
            _ => {}
        }
    }

    if vm_instance_in_place
        && keep == Some(true)
        && (past.dv_deleted || past.velero || rj.phase == RjPhase::Succeeded)
    {
        for d in disks.iter().filter(|d| !d.ours()) {
            let failed_event = ctx.events.iter().find(|e| {
                e.message.as_deref().is_some_and(|m| {
                    m.contains("Failed to keep old PVC") && super::ctx::mentions(m, &d.name)
                })
            });
            let kept_event = ctx.events.iter().any(|e| {
                e.message.as_deref().is_some_and(|m| {
                    m.contains("Keep old PVC")
                        && super::ctx::mentions(m, &d.name)
                        && !m.contains("Failed")
                })
            });
            let original_bound_before = d.pvc.is_some_and(|p| {
                p.phase.as_deref() == Some("Bound")
                    && matches!((p.meta.created, rj.meta.created), (Some(c), Some(r)) if c < r)
            });
            let foreign = matches!(d.rename, Rename::Foreign);
            if kept_event && failed_event.is_none() {
                continue;
            }
            if failed_event.is_some() || original_bound_before || foreign {
                let evidence = if let Some(e) = failed_event {
                    format!("event: {}", e.message.as_deref().unwrap_or_default())
                } else if foreign {
                    format!("{} is not this RestoreJob's", d.orig_name)
                } else {
                    format!("{} is still the pre-restore PVC", d.name)
                };
                let mut objects = vec![pvc_ref(ctx.ns, &d.name)];
                if d.orig.is_some() {
                    objects.push(pvc_ref(ctx.ns, &d.orig_name));
                }
                out.push(
                    snap,
                    Code::DiskNotKept,
                    id,
                    objects,
                    format!("{}: the current disk was not kept as {} although keepOriginalPVC is on ({evidence})", d.name, d.orig_name),
                    "The pre-restore data of this disk is not in an -orig PVC. If the original PVC still exists, do not delete it: it may hold the only copy".into(),
                );
            }
        }
    }

    // disk-not-restored
    let velero_completed = ctx
        .velero
        .is_some_and(|v| v.phase.as_deref() == Some("Completed"));
    if ctx.in_place
        && ctx.velero.is_some()
        && kind_present(snap, Kind::DataDownload)
        && (velero_completed || rj.phase == RjPhase::Succeeded)
    {
        for d in disks {
            let problem = match d.download {
                None => Some(format!(
                    "Velero created no DataDownload for {} (an existing PVC is skipped)",
                    d.name
                )),
                Some(dd) if dd.is_failed() => Some(format!(
                    "DataDownload {} for {} is {}",
                    dd.meta.name,
                    d.name,
                    dd.phase.display()
                )),
                _ => None,
            };
            if let Some(p) = problem {
                let mut objects = vec![pvc_ref(ctx.ns, &d.name)];
                if let Some(v) = ctx.velero {
                    objects.push(ObjRef::new(
                        Kind::VeleroRestore,
                        &v.meta.namespace,
                        &v.meta.name,
                    ));
                }
                out.push(
                    snap,
                    Code::DiskNotRestored,
                    id,
                    objects,
                    format!("{p}: the disk still holds its pre-restore content although the restore reports {}", if rj.phase == RjPhase::Succeeded { "Succeeded" } else { "progress" }),
                    format!("Restore {} again (a new RestoreJob) once the cause is understood; the -orig PVC {} may hold the current data", d.name, d.orig_name),
                );
            }
        }
    }

    // vm-not-halted / vm-halt-stuck
    if !terminal && ctx.is_vm_instance() && ctx.in_place {
        let vm_name = ctx.vm_name().unwrap_or_default();
        let vm = ctx.snap.vms.get(ctx.ns, &vm_name);
        if let Some(vmi) = ctx.snap.vmis.get(ctx.ns, &vm_name) {
            let returned = ctx.velero.is_some_and(|v| {
                v.phase.as_deref() == Some("Completed")
                    || matches!((vmi.meta.created, v.meta.created), (Some(i), Some(r)) if i > r)
            });
            if past.any() && !returned {
                let what = if past.renamed {
                    "a disk was renamed"
                } else if past.dv_deleted {
                    "a DataVolume was deleted"
                } else {
                    "a Velero Restore was created"
                };
                out.push(
                    snap,
                    Code::VmNotHalted,
                    id,
                    vec![ObjRef::new(Kind::VirtualMachineInstance, ctx.ns, &vm_name), ctx.rj_ref()],
                    format!("{what} while VMI {vm_name} is still {}: the disks changed under a running VM", vmi.phase.display()),
                    format!("Stop the VM now (virtctl stop {vm_name} -n {}), then check the disks before the restore goes on", ctx.ns),
                );
            } else if vm.is_some_and(|v| v.run_strategy.as_deref() == Some("Halted")) {
                let since = ctx
                    .event_with("Waiting for VM")
                    .and_then(|e| e.first.or(e.last))
                    .or_else(|| {
                        // Without the event, the later of the VM's last change and the restore's
                        // start: a VM created months ago has not been halting for months.
                        [vm.and_then(|v| v.meta.last_change), ctx.began()]
                            .into_iter()
                            .flatten()
                            .max()
                    });
                if ctx.older_than(since, ctx.settings.stall_after) {
                    out.push(
                        snap,
                        Code::VmHaltStuck,
                        id,
                        vec![ObjRef::new(Kind::VirtualMachineInstance, ctx.ns, &vm_name)],
                        format!(
                            "VM {vm_name} is Halted but its VMI is still {} after {}",
                            vmi.phase.display(),
                            since.map(|s| human(ctx.now.duration_since(s))).unwrap_or_default()
                        ),
                        format!("Look at the VMI's virt-launcher pod and events; force it off with virtctl stop --force --grace-period=0 {vm_name} -n {} if the guest hangs", ctx.ns),
                    );
                }
            }
        }
    }

    // velero-restore-stuck / velero-restore-failed
    if let Some(v) = ctx.velero {
        let vref = ObjRef::new(Kind::VeleroRestore, &v.meta.namespace, &v.meta.name);
        if v.is_failed() {
            let failed_dds: Vec<String> = disks
                .iter()
                .filter_map(|d| {
                    d.download
                        .filter(|dd| dd.is_failed())
                        .map(|dd| format!("{} ({})", dd.meta.name, d.name))
                })
                .collect();
            let left = leftovers(ctx, disks);
            let mut objects = vec![vref, ctx.rj_ref()];
            objects.extend(
                downloads(ctx)
                    .into_iter()
                    .filter(|dd| dd.is_failed())
                    .map(|dd| ObjRef::new(Kind::DataDownload, &dd.meta.namespace, &dd.meta.name)),
            );
            out.push(
                snap,
                Code::VeleroRestoreFailed,
                id,
                objects,
                format!(
                    "Velero Restore {} is {}{}{}{}",
                    v.meta.name,
                    v.phase.display(),
                    v.failure_reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default(),
                    if failed_dds.is_empty() { String::new() } else { format!("; failed DataDownloads: {}", failed_dds.join(", ")) },
                    if left.is_empty() { String::new() } else { format!("; left behind: {}", left.join(", ")) }
                ),
                format!("velero restore describe {} -n {} --details; resume the HelmReleases and restart the VM once the disks are checked", v.meta.name, v.meta.namespace),
            );
        } else if !v.is_terminal() && !terminal {
            let last = std::iter::once(v.meta.last_change.or(v.meta.created))
                .chain(
                    disks
                        .iter()
                        .filter_map(|d| d.download)
                        .map(|dd| dd.meta.last_change.or(dd.meta.created)),
                )
                .flatten()
                .max();
            if ctx.older_than(last, ctx.settings.stall_after) {
                let extra = if v.phase.as_deref() == Some("FailedValidation") {
                    format!(" (validation: {})", v.validation_errors.join("; "))
                } else {
                    String::new()
                };
                out.push(
                    snap,
                    Code::VeleroRestoreStuck,
                    id,
                    vec![vref],
                    format!(
                        "Velero Restore {} is {}{extra} with no change for {}; the controller has no deadline on this path and waits forever",
                        v.meta.name,
                        v.phase.display(),
                        last.map(|l| human(ctx.now.duration_since(l))).unwrap_or_default()
                    ),
                    format!("Check velero and node-agent logs (velero restore describe {} -n {}); a FailedValidation restore never proceeds: delete the RestoreJob and fix the cause", v.meta.name, v.meta.namespace),
                );
            }
        }
    }
}

/// What a failed VM restore leaves behind, for messages.
pub fn leftovers(ctx: &Ctx, disks: &[Disk]) -> Vec<String> {
    let mut left = Vec::new();
    for r in vm_releases(ctx, disks) {
        if ctx
            .snap
            .helm_releases
            .get(ctx.ns, &r)
            .is_some_and(|h| h.is_suspended() == Some(true))
        {
            left.push(format!("suspended HelmRelease {r}"));
        }
    }
    if let Some(vm) = ctx.vm_name().and_then(|n| ctx.snap.vms.get(ctx.ns, &n))
        && vm.run_strategy.as_deref() == Some("Halted")
    {
        left.push(format!("halted VM {}", vm.meta.name));
    }
    for d in disks.iter().filter(|d| d.ours()) {
        left.push(format!("-orig PVC {}", d.orig_name));
    }
    left
}
