//! The VM restore findings: keeping, renaming, restoring disks, halting, Velero.

use super::codes::Code;
use super::controller::{self, Generation};
use super::ctx::{Ctx, human};
use super::disks::{Disk, Rename, downloads, kind_observed};
use super::emit::Findings;
use super::report::ObjRef;
use super::vm::{half_done_settled, leftovers, live_users_of_renamed, past};
use crate::model::objects::{RjPhase, VeleroRestore};
use crate::model::ownership::{OrigOwner, orig_owner};
use crate::model::{Kind, Obj};

fn pvc_ref(ns: &str, name: &str) -> ObjRef {
    ObjRef::new(Kind::PersistentVolumeClaim, ns, name)
}

/// Running, not finished Pods that use a disk: through its PVC, its `-orig` PVC, or any claim
/// bound to one of its PVs.
fn pods_using(ctx: &Ctx, d: &Disk) -> Vec<String> {
    let pvs: Vec<&str> = [d.pv, d.orig_pv]
        .into_iter()
        .flatten()
        .map(|p| p.meta.name.as_str())
        .collect();
    ctx.snap
        .pods
        .in_namespace(ctx.ns)
        .filter(|p| !p.is_finished())
        .filter(|p| {
            p.claims.iter().any(|c| {
                c == &d.name
                    || c == &d.orig_name
                    || ctx
                        .snap
                        .pvcs
                        .get(ctx.ns, c)
                        .and_then(|x| x.volume_name.as_deref())
                        .is_some_and(|v| pvs.contains(&v))
            })
        })
        .map(|p| p.meta.name.to_string())
        .collect()
}

/// What to do about a half-done rename, and whether resume-rename fits: it refuses once the
/// restore is over and while anything runs on the disk, so it is offered only otherwise.
fn half_done_remedy(ctx: &Ctx, d: &Disk) -> (String, bool) {
    let vm = ctx.vm_name().unwrap_or_default();
    if ctx.terminal() {
        return (
            format!(
                "The restore is over ({}): finishing the rename now would move the disk out from under the application and restore nothing. Stop the VM (virtctl stop {vm} -n {}), remove our own Pending {} once its PV is checked, and restore again under a new RestoreJob name",
                ctx.rj.phase.as_str(),
                ctx.ns,
                d.orig_name
            ),
            false,
        );
    }
    if let Some(vmi) = ctx.snap.vmis.get(ctx.ns, &vm) {
        return (
            format!(
                "VMI {} is {}: stop the VM first (virtctl stop {vm} -n {}); then finish the rename with the resume-rename action",
                vmi.meta.name,
                vmi.phase.display(),
                ctx.ns
            ),
            false,
        );
    }
    let pods = pods_using(ctx, d);
    if !pods.is_empty() {
        return (
            format!(
                "Pod {} uses the disk: stop it first; then finish the rename with the resume-rename action",
                pods.join(", ")
            ),
            false,
        );
    }
    (
        "Finish the rename with the resume-rename action (it deletes the original PVC only while it still claims the PV, then points the PV's claimRef at the -orig PVC)".into(),
        true,
    )
}

/// `keeps`: the controller renames this restore's disks (`vm::keeps_disks`); the rules about
/// keeping disks hold only then.
pub(super) fn findings(ctx: &Ctx, disks: &[Disk], keeps: bool, out: &mut Findings) {
    let snap = ctx.snap;
    let id = Some(&ctx.id);
    let rj = ctx.rj;
    let terminal = ctx.terminal();
    let keep = ctx.keep_original();
    let past = past(ctx, disks);

    if keeps && keep == Some(false) && !terminal {
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
        if keeps && keep != Some(false) && d.orig_name.len() > crate::model::names::MAX_NAME_LEN {
            out.push(
                snap,
                Code::OrigNameTooLong,
                id,
                vec![ctx.rj_ref(), pvc_ref(ctx.ns, &d.name)],
                format!("the -orig name of {} is {} characters long (limit 253): the controller cannot create it and the disk will not be kept", d.name, d.orig_name.len()),
                "A shorter RestoreJob name does not help (the suffix has a fixed length): the disk name itself is too long. Copy the data elsewhere first, then restore with keepOriginalPVC: false".into(),
            );
        }
        if !(keeps && keep == Some(true)) {
            continue;
        }
        match &d.rename {
            Rename::Foreign if !terminal => {
                let orig = d.orig.map(|o| &**o);
                let left_by_deleted = orig.is_some_and(|o| {
                    matches!(
                        orig_owner(o, snap.restore_jobs.in_namespace(ctx.ns)),
                        OrigOwner::Deleted { .. }
                    )
                });
                let made = orig
                    .and_then(|o| o.meta.created)
                    .map_or("at an unknown time".to_string(), |t| t.to_string());
                let whose = match &d.ownership {
                    _ if left_by_deleted => format!(
                        "it was left by a deleted RestoreJob (created {made}{})",
                        match &d.ownership {
                            Some(super::report::Ownership::Foreign { other_uid: Some(u) }) =>
                                format!(", restore-job-uid {u}"),
                            _ => String::new(),
                        }
                    ),
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
                        "{} would keep {} as {}, but that name is held by a PVC this RestoreJob did not create ({whose}); {}",
                        rj.meta.name,
                        d.name,
                        d.orig_name,
                        controller::foreign_orig_consequence(ctx.generation)
                    ),
                    {
                        // Only a guarded controller is known to stop on its own before the halt.
                        let first = if ctx.generation == Generation::Guarded {
                            "Let the controller fail this RestoreJob (or delete it)"
                        } else {
                            "Delete this RestoreJob before it halts the VM"
                        };
                        if left_by_deleted {
                            format!(
                                "{first}; then either reclaim the stale {} with the reclaim-orig action (check its content first: it may be the only copy of an older disk) or re-create the restore under another name",
                                d.orig_name
                            )
                        } else {
                            format!(
                                "{first} and re-create the restore under another name: {} belongs to a RestoreJob that still exists",
                                d.orig_name
                            )
                        }
                    },
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
                let (remedy, offer) = half_done_remedy(ctx, d);
                let f = out.push(
                    snap,
                    Code::RenameHalfDone,
                    id,
                    objects,
                    format!(
                        "the rename of {} to {} stopped halfway: {}",
                        d.name,
                        d.orig_name,
                        why.join(", ")
                    ),
                    remedy,
                );
                if !offer {
                    f.action = None;
                }
            }
            _ => {}
        }
    }

    // With a predecessor's Velero Restore the controller touched no disk: nothing to keep.
    if keeps
        && keep == Some(true)
        && ctx.stale_velero.is_none()
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
                    format!(
                        "{}: the current disk was not kept as {} although keepOriginalPVC is on ({evidence}); {}",
                        d.name,
                        d.orig_name,
                        controller::not_kept_consequence(ctx.generation)
                    ),
                    "The pre-restore data of this disk is not in an -orig PVC. If the original PVC still exists, do not delete it: it may hold the only copy".into(),
                );
            }
        }
    }

    if keeps {
        super::bind_wait::findings(ctx, disks, out);
        mounted_renamed(ctx, disks, out);
    }

    if let Some(old) = ctx.stale_velero {
        stale_restore(ctx, disks, old, out);
    }

    // disk-not-restored
    let velero_completed = ctx
        .velero
        .is_some_and(|v| v.phase.as_deref() == Some("Completed"));
    // DataDownloads count as read when their API group was (a dump holding the Velero Restore
    // but no DataDownload at all is the one-disk VM that lost the race: Velero skipped its
    // only disk), never when the live watch of the kind has not listed. Copies alike: Velero
    // skips a PVC that exists in the target namespace, it never overwrites it.
    if ctx.velero.is_some()
        && kind_observed(snap, Kind::DataDownload)
        && (velero_completed || rj.phase == RjPhase::Succeeded)
    {
        not_restored(ctx, disks, out);
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
                            since.map(|s| ctx.clock.human_since(s)).unwrap_or_default()
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
        } else if v.is_rejected() && !terminal {
            rejected_restore(ctx, disks, v, out);
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
                        last.map(|l| ctx.clock.human_since(l)).unwrap_or_default()
                    ),
                    format!("Check velero and node-agent logs (velero restore describe {} -n {}); a FailedValidation restore never proceeds: delete the RestoreJob and fix the cause", v.meta.name, v.meta.namespace),
                );
            }
        }
    }
}

/// `velero-restore-stale`, and `disk-not-restored` on each disk once the controller counts the
/// predecessor's Restore as this one's outcome (it is `Completed`, or the RestoreJob
/// `Succeeded`).
fn stale_restore(ctx: &Ctx, disks: &[Disk], old: &Obj<VeleroRestore>, out: &mut Findings) {
    let snap = ctx.snap;
    let id = Some(&ctx.id);
    let rj = ctx.rj;
    let vref = ObjRef::new(Kind::VeleroRestore, &old.meta.namespace, &old.meta.name);
    let whose = super::vm_steps::stale_restore_text(ctx, old);
    let outcome = match &rj.phase {
        RjPhase::Succeeded => "it reports Succeeded, yet nothing was restored".to_string(),
        RjPhase::Failed => "it failed on that Restore's outcome; nothing was restored".to_string(),
        _ => format!(
            "the controller takes it for this restore's, skips every preparation step and ends with its phase ({}): nothing will be restored",
            old.phase.display()
        ),
    };
    let disk_list = disks
        .iter()
        .map(|d| d.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    out.push(
        snap,
        Code::VeleroRestoreStale,
        id,
        vec![ctx.rj_ref(), vref.clone()],
        format!(
            "the only Velero Restore labelled for {} is not this restore's: {whose}; {outcome}. Nothing was suspended, halted, kept or deleted: {} still hold their pre-restore content",
            rj.meta.name,
            if disk_list.is_empty() { "the disks".to_string() } else { disk_list }
        ),
        format!(
            "Create the restore again under a RestoreJob name no Velero Restore carries (or delete Velero Restore {} -n {}, wait until it is gone, then re-create this RestoreJob); delete this one, which did nothing",
            old.meta.name, old.meta.namespace
        ),
    );
    let counts_as_done =
        old.phase.as_deref() == Some("Completed") || rj.phase == RjPhase::Succeeded;
    if !counts_as_done {
        return;
    }
    for d in disks {
        out.push(
            snap,
            Code::DiskNotRestored,
            id,
            vec![pvc_ref(ctx.ns, &d.name), vref.clone()],
            format!(
                "{}: not restored: the only Velero Restore (and any DataDownload of it) is a predecessor's ({}); the disk still holds its pre-restore content although the restore reports {}",
                d.name,
                old.meta.name,
                if rj.phase == RjPhase::Succeeded { "Succeeded" } else { "progress" }
            ),
            format!(
                "Nothing of {} was touched: restore it again under a new RestoreJob name (see velero-restore-stale)",
                d.name
            ),
        );
    }
}

/// `velero-restore-rejected`: Velero refused the Restore for good while the controller, which
/// ends a restore only on `Completed`/`Failed`/`PartiallyFailed`, waits for it forever with the
/// application taken apart. Nothing changes by waiting, so it is an error at once.
fn rejected_restore(ctx: &Ctx, disks: &[Disk], v: &Obj<VeleroRestore>, out: &mut Findings) {
    let vref = ObjRef::new(Kind::VeleroRestore, &v.meta.namespace, &v.meta.name);
    let why = if v.validation_errors.is_empty() {
        String::new()
    } else {
        format!(" ({})", v.validation_errors.join("; "))
    };
    let left = leftovers(ctx, disks);
    let kept: Vec<&str> = disks
        .iter()
        .filter(|d| d.ours())
        .map(|d| d.orig_name.as_str())
        .collect();
    let data = if kept.is_empty() {
        String::new()
    } else {
        format!(
            " The current disks live only in {}: do not delete them, and do not resume the disks' HelmReleases before the disks are back (they would re-create empty disks under the original names).",
            kept.join(", ")
        )
    };
    out.push(
        ctx.snap,
        Code::VeleroRestoreRejected,
        Some(&ctx.id),
        vec![vref, ctx.rj_ref()],
        format!(
            "Velero Restore {} is {}{why}: Velero will never run it, and the controller ends a restore only on Completed, Failed or PartiallyFailed, so {} stays Running forever{}",
            v.meta.name,
            v.phase.display(),
            ctx.rj.meta.name,
            if left.is_empty() { String::new() } else { format!("; left behind: {}", left.join(", ")) }
        ),
        format!(
            "Waiting changes nothing. Fix the cause (a missing or expired Velero Backup: restore from a Backup whose Velero Backup exists, see velero-backup-missing), then restore again under a new RestoreJob name (restorewatch action restart-restore) and delete {} afterwards (deleting it undoes nothing).{data}",
            ctx.rj.meta.name
        ),
    );
}

/// `disk-not-restored` on every disk of a finished Velero Restore that got no successful
/// DataDownload: Velero skipped it (an existing PVC is skipped, not overwritten) or its
/// download failed.
fn not_restored(ctx: &Ctx, disks: &[Disk], out: &mut Findings) {
    let rj = ctx.rj;
    let ns = ctx.dest_ns();
    let none_at_all = downloads(ctx).is_empty();
    let warned = ctx
        .velero
        .and_then(|v| v.warnings)
        .filter(|w| *w > 0)
        .map(|w| {
            format!(
                " (Velero counted {w} warning{})",
                if w == 1 { "" } else { "s" }
            )
        })
        .unwrap_or_default();
    let outcome = if rj.phase == RjPhase::Succeeded {
        "Succeeded"
    } else {
        "progress"
    };
    for d in disks {
        let existed = d.pvc.is_some_and(
            |p| matches!((p.meta.created, rj.meta.created), (Some(c), Some(r)) if c < r),
        );
        let problem = match d.download {
            None if none_at_all => format!(
                "the Velero Restore has no DataDownload at all, so none for {} (an existing PVC is skipped){warned}",
                d.name
            ),
            None => format!(
                "Velero created no DataDownload for {} (an existing PVC is skipped){warned}",
                d.name
            ),
            Some(dd) if dd.is_failed() => format!(
                "DataDownload {} for {} is {}",
                dd.meta.name,
                d.name,
                dd.phase.display()
            ),
            _ => continue,
        };
        let mut objects = vec![pvc_ref(ns, &d.name)];
        if let Some(v) = ctx.velero {
            objects.push(ObjRef::new(
                Kind::VeleroRestore,
                &v.meta.namespace,
                &v.meta.name,
            ));
        }
        let (message, remedy) = if ctx.in_place {
            let holds = if d.ours() {
                format!("; the -orig PVC {} may hold the current data", d.orig_name)
            } else {
                String::new()
            };
            (
                format!(
                    "{problem}: the disk still holds its pre-restore content although the restore reports {outcome}"
                ),
                format!(
                    "Restore {} again (a new RestoreJob) once the cause is understood{holds}",
                    d.name
                ),
            )
        } else {
            let what = if existed {
                let option = match rj.options.fail_if_target_exists {
                    crate::model::Field::Known(false) => {
                        "failIfTargetExists: false does not overwrite"
                    }
                    _ => "Velero does not overwrite an existing PVC",
                };
                format!(
                    "{ns}/{} existed before the restore and was kept as it was ({option})",
                    d.name
                )
            } else {
                format!("{ns}/{} holds no restored data", d.name)
            };
            (
                format!(
                    "{problem}: the copy's disk is not the backup's data although the restore reports {outcome}; {what}"
                ),
                format!(
                    "Restore the copy into a namespace where {} does not exist (or delete that PVC first if it holds nothing needed), under a new RestoreJob",
                    d.name
                ),
            )
        };
        out.push(
            ctx.snap,
            Code::DiskNotRestored,
            Some(&ctx.id),
            objects,
            message,
            remedy,
        );
    }
}

/// `mounted-disk-renamed`: the controller (before the fixes) renamed a disk that a running VM
/// of another application mounts, without halting it: the original PVC stays `Terminating` /
/// `Lost` while the VM runs, and the VM loses its disk when it next stops or migrates.
fn mounted_renamed(ctx: &Ctx, disks: &[Disk], out: &mut Findings) {
    for d in disks {
        let users = live_users_of_renamed(ctx, d);
        if users.is_empty() {
            continue;
        }
        let original = d.pvc.map(|p| {
            let state = if p.meta.deleted.is_some() {
                format!("Terminating, {}", p.phase.display())
            } else {
                p.phase.display().to_string()
            };
            format!("{} is {state}", p.meta.name)
        });
        let mut objects = vec![pvc_ref(ctx.ns, &d.name), pvc_ref(ctx.ns, &d.orig_name)];
        objects.extend(
            users
                .iter()
                .filter_map(|u| u.strip_prefix("VM "))
                .filter_map(|u| u.split_whitespace().next())
                .map(|vm| ObjRef::new(Kind::VirtualMachine, ctx.ns, vm)),
        );
        out.push(
            ctx.snap,
            Code::MountedDiskRenamed,
            Some(&ctx.id),
            objects,
            format!(
                "{} was renamed to {} while {} still runs on it{}: that VM loses its disk as soon as it stops or moves (the PV now belongs to the -orig PVC), and the restore will overwrite what it writes",
                d.name,
                d.orig_name,
                users.join(", "),
                original.map(|o| format!(" ({o})")).unwrap_or_default()
            ),
            format!(
                "Stop every VM that mounts {} now (virtctl stop VM -n {}) and keep it stopped until the restore is over and checked; do not delete {} (it holds the disk's pre-restore data). Restore a disk shared with a running VM only after halting that VM",
                d.name, ctx.ns, d.orig_name
            ),
        );
    }
}
