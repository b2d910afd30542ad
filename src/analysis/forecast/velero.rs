//! The Velero driver (VMInstance and VMDisk), in the order the real controller writes:
//! validate, suspend the HelmReleases, halt the VM and wait for its VMI to go, keep each disk
//! under its `-orig` name, delete the DataVolumes, create the Velero Restore (whose labels
//! carry the RestoreJob's name), then Velero plays it.

use super::{Branch, Run};
use crate::analysis::Settings;
use crate::analysis::ctx::Ctx;
use crate::model::k8s_names::{dns_subdomain, label_value};
use crate::model::names::{
    ANN_ORIGINAL_RECLAIM_POLICY, ANN_RESTORE_JOB_UID, MAX_NAME_LEN, orig_pvc_name, vm_disk_name,
    vm_instance_release,
};
use crate::model::objects::RjPhase;
use crate::model::{Field, Kind};

/// What the controller reads from the RestoreJob and its Backup before it writes anything.
struct Facts {
    kind: Option<String>,
    app: Option<String>,
    in_place: bool,
    dest_ns: String,
    /// The disks the Backup records (`status.underlyingResources`), as the controller takes
    /// them; `None` when the Backup records none.
    recorded: Option<Vec<String>>,
    keep: Option<bool>,
    invalid: Vec<&'static str>,
    backup_found: bool,
    velero_backup: Option<String>,
    /// A predecessor's Velero Restore carries this RestoreJob's owner labels: its phase.
    stale_velero: Option<String>,
    /// This RestoreJob's own Velero Restore (name, UID): the preparation is behind it.
    own_velero: Option<(String, String)>,
}

fn facts(run: &Run) -> Option<Facts> {
    let rj = run.rj()?;
    let settings = Settings::default();
    let ctx = Ctx::new(&run.world.snap, &settings, run.world.now, &rj);
    let recorded = match ctx.backup.map(|b| &b.data_volumes) {
        Some(Field::Known(list)) if !list.is_empty() => {
            Some(list.iter().map(|d| d.data_volume.clone()).collect())
        }
        _ => None,
    };
    Some(Facts {
        kind: ctx.target_kind().map(str::to_string),
        app: ctx.app().map(str::to_string),
        in_place: ctx.in_place,
        dest_ns: ctx.dest_ns().to_string(),
        recorded,
        keep: ctx.keep_original(),
        invalid: rj.options.invalid_velero_fields(),
        backup_found: ctx.backup.is_some(),
        velero_backup: ctx
            .backup
            .and_then(|b| b.driver_metadata.get("velero.io/backup-name").cloned()),
        stale_velero: ctx
            .stale_velero
            .map(|v| v.phase.known().cloned().unwrap_or_default()),
        own_velero: ctx
            .velero
            .map(|v| (v.meta.name.to_string(), v.meta.uid.to_string())),
    })
}

/// Plays the restore; returns what could not be told, if the model stopped on it.
pub(super) fn run(run: &mut Run) -> Option<String> {
    let f = facts(run)?;
    if !f.backup_found {
        return Some("the Backup is not there: the controller fails the RestoreJob, and nothing else can be told".into());
    }
    let ns = run.ns.clone();
    let name = run.name.clone();
    if !f.invalid.is_empty() {
        run.fail(
            "validate",
            format!("invalid restore options: {}", f.invalid.join(", ")),
        );
        return None;
    }
    let vm_instance = f.kind.as_deref() == Some("VMInstance");
    let vm_disk = f.kind.as_deref() == Some("VMDisk");
    let keep = f.keep == Some(true);
    // The disks the controller prepares: what the Backup records; the newer controller takes a
    // VMDisk's own disk when the Backup records none (seed 000, #3427).
    let disks: Vec<String> = match (&f.recorded, run.branch, vm_disk, &f.app) {
        (Some(d), _, _, _) => d.clone(),
        (None, Branch::Guarded, true, Some(app)) => vec![vm_disk_name(app)],
        _ => Vec::new(),
    };
    let prepares = f.in_place
        && (vm_instance || !disks.is_empty())
        && f.stale_velero.is_none()
        && f.own_velero.is_none();

    if run.branch == Branch::Guarded {
        let rj = run.rj()?;
        if let Some(first) = super::restore_ahead(&run.world.snap, &rj) {
            run.fail(
                "validate",
                format!(
                    "ConcurrentRestore: RestoreJob {first} restores the same application first"
                ),
            );
            return None;
        }
        if prepares && keep {
            for d in &disks {
                let orig = orig_pvc_name(d, &name);
                if let Some(held) = run.world.snap.pvcs.get(&ns, &orig)
                    && held.meta.annotation(ANN_RESTORE_JOB_UID) != Some(run.uid.as_str())
                {
                    run.fail(
                        "validate",
                        format!("PVC {orig} already exists and does not belong to this RestoreJob"),
                    );
                    return None;
                }
            }
        }
        if prepares && vm_disk {
            for d in &disks {
                if let Some(pod) = run.world.mounted_by(&ns, d) {
                    run.fail(
                        "validate",
                        format!("disk {d} is in use by pod/{pod}: stop what mounts it first"),
                    );
                    return None;
                }
            }
        }
    }
    run.running();
    run.stage(
        "validate",
        "the controller starts the restore (Running)".into(),
    );
    if let Some(phase) = &f.stale_velero {
        // The controller looks its Velero Restore up by the owner labels first: one left by a
        // RestoreJob of the same name is taken for this one's, and every step is skipped.
        if phase == "Completed" {
            run.world.set_phase(&ns, &name, RjPhase::Succeeded, None);
            run.stage(
                "velero-completed",
                "the controller takes a predecessor's Completed Velero Restore for this one's: every step skipped, Succeeded with nothing restored".into(),
            );
            return None;
        }
        return Some(format!(
            "a predecessor's Velero Restore ({}) carries this RestoreJob's owner labels: the controller waits on it instead of restoring",
            if phase.is_empty() {
                "no phase"
            } else {
                phase.as_str()
            }
        ));
    }

    if prepares {
        let mut releases = Vec::new();
        if vm_instance && let Some(app) = &f.app {
            releases.push(vm_instance_release(app));
        }
        releases.extend(disks.iter().cloned());
        let mut done = Vec::new();
        for r in &releases {
            if run.world.set_suspend(&ns, r, true) {
                done.push(r.clone());
            }
        }
        run.stage(
            "suspend-releases",
            format!("HelmReleases suspended: {}", list_or_none(&done)),
        );
        if vm_instance && let Some(app) = &f.app {
            let vm = vm_instance_release(app);
            if run.world.set_run_strategy(&ns, &vm, "Halted") {
                run.world.vm_stopped(&ns, &vm);
                run.stage(
                    "halt-vm",
                    format!("VM {vm} halted (runStrategy Halted), its VMI gone"),
                );
            }
        }
        if keep {
            if let Some(stuck) = keep_disks(run, &disks) {
                return Some(stuck);
            }
        } else {
            // keepOriginalPVC false: the disks are replaced without a copy.
            for d in &disks {
                run.world.delete_pvc(&ns, d);
            }
            run.stage(
                "keep-disks",
                format!(
                    "keepOriginalPVC is false: {} deleted without a copy",
                    list_or_none(&disks)
                ),
            );
        }
        let mut deleted = Vec::new();
        for d in &disks {
            if run.world.delete(Kind::DataVolume, &ns, d) {
                deleted.push(d.clone());
            }
        }
        run.stage(
            "delete-datavolumes",
            format!("DataVolumes deleted: {}", list_or_none(&deleted)),
        );
    }

    // The Velero Restore and its resource-modifier ConfigMap carry the RestoreJob's name and
    // namespace as label values; the ConfigMap's name holds both.
    let cm = format!("restore-modifiers-{ns}-{name}");
    let refused = label_value("the RestoreJob's name as a label value", &name)
        .and_then(|_| label_value("the namespace as a label value", &ns))
        .and_then(|_| dns_subdomain("the resource-modifier ConfigMap's name", &cm));
    if let Err(e) = refused
        && f.own_velero.is_none()
    {
        // The API server's own words where the recorded run has them (dump 08-b).
        let why = if name.len() > crate::model::k8s_names::MAX_LABEL_LEN {
            format!("metadata.labels: Invalid value: {name:?}: must be no more than 63 bytes")
        } else {
            e.to_string()
        };
        run.fail(
            "velero-restore",
            format!(
                "failed to create Velero Restore: failed to create resourceModifiers ConfigMap: failed to create resourceModifiers ConfigMap: ConfigMap {cm:?} is invalid: {why}"
            ),
        );
        return None;
    }
    let restore = match &f.own_velero {
        Some(own) => own.clone(),
        None => {
            let r = run
                .world
                .create_velero_restore(&ns, &name, f.velero_backup.as_deref());
            run.stage("velero-restore", format!("Velero Restore {} created", r.0));
            r
        }
    };

    // From here on it is Velero's: assumed to complete (a failure is not knowable before).
    let vm = match (vm_instance, &f.app) {
        (true, Some(app)) if f.in_place => Some(vm_instance_release(app)),
        _ => None,
    };
    let mut releases: Vec<String> = Vec::new();
    if prepares || (f.own_velero.is_some() && f.in_place && (vm_instance || !disks.is_empty())) {
        if let Some(v) = &vm {
            releases.push(v.clone());
        }
        releases.extend(disks.iter().cloned());
    }
    let restored: Vec<String> = match (&f.recorded, vm_disk, &f.app) {
        (Some(d), _, _) => d.clone(),
        (None, true, Some(app)) => vec![vm_disk_name(app)],
        _ => disks.clone(),
    };
    let skipped = run.world.velero_completes(
        &f.dest_ns,
        (&restore.0, &restore.1),
        &restored,
        &releases,
        vm.as_deref(),
    );
    run.world.set_phase(&ns, &name, RjPhase::Succeeded, None);
    run.stage(
        "velero-completed",
        format!(
            "assuming Velero completes: the RestoreJob Succeeds{}",
            if skipped.is_empty() {
                String::new()
            } else {
                format!(
                    "; Velero skips the PVCs that still exist ({}), restoring nothing into them",
                    skipped.join(", ")
                )
            }
        ),
    );
    None
}

fn list_or_none(l: &[String]) -> String {
    if l.is_empty() {
        "none".into()
    } else {
        l.join(", ")
    }
}

/// `renamePVC` for each disk, per branch. `Some` when the controller stops there for good.
fn keep_disks(run: &mut Run, disks: &[String]) -> Option<String> {
    let ns = run.ns.clone();
    let name = run.name.clone();
    let mut said = Vec::new();
    for d in disks {
        let orig = orig_pvc_name(d, &name);
        if orig.len() > MAX_NAME_LEN {
            match run.branch {
                Branch::Guarded => {
                    run.stage(
                        "keep-disks",
                        format!(
                            "creating {} ({} characters) fails; the guarded controller retries without end",
                            d,
                            orig.len()
                        ),
                    );
                    return Some(format!(
                        "the guarded controller retries keeping {d} without end: the RestoreJob stays Running"
                    ));
                }
                Branch::Unguarded => {
                    let (ns2, name2) = (ns.clone(), name.clone());
                    run.world.event(
                        &ns2,
                        &name2,
                        "Warning",
                        "PrepareForRestore",
                        &format!(
                            "Failed to keep old PVC {d}: -orig name is {} characters",
                            orig.len()
                        ),
                    );
                    said.push(format!("{d} not kept (its -orig name is too long)"));
                    continue;
                }
            }
        }
        if let Some(held) = run.world.snap.pvcs.get(&ns, &orig) {
            let ours = held.meta.annotation(ANN_RESTORE_JOB_UID) == Some(run.uid.as_str());
            if !ours {
                // Unguarded: "already kept", returned without a word (dump 02-b). The guarded
                // branch refused before this point.
                said.push(format!(
                    "{d} not kept: {orig} already exists (skipped silently)"
                ));
                continue;
            }
        }
        let Some(pvc) = run.world.snap.pvcs.get(&ns, d).cloned() else {
            said.push(format!("{d}: no PVC, nothing to keep"));
            continue;
        };
        if pvc.phase.as_deref() != Some("Bound") || pvc.volume_name.is_none() {
            run.world.delete_pvc(&ns, d);
            said.push(format!("{d} unbound: deleted, nothing kept"));
            continue;
        }
        let pv = pvc.volume_name.clone().unwrap_or_default();
        let guard = run.branch == Branch::Guarded;
        let policy = run.world.snap.pvs.get("", &pv).and_then(|p| {
            p.meta
                .annotation(ANN_ORIGINAL_RECLAIM_POLICY)
                .map(str::to_string)
                .or_else(|| p.reclaim_policy.as_deref().map(str::to_string))
        });
        run.world.retain_pv(&pv, guard);
        let uid_text = run.uid.clone();
        let created = if run.world.snap.pvcs.get(&ns, &orig).is_some() {
            run.world
                .snap
                .pvcs
                .get(&ns, &orig)
                .map(|p| p.meta.uid.to_string())
        } else {
            run.world.create_orig(
                &ns,
                d,
                &orig,
                guard.then_some((uid_text.as_str(), policy.as_deref())),
            )
        };
        let Some(orig_uid) = created else { continue };
        run.world.delete_pvc(&ns, d);
        run.world.point_pv(&pv, &ns, &orig, &orig_uid);
        let event = format!("Keep old PVC {d} as {orig} (PV: {pv})");
        run.world
            .event(&ns, &name, "Normal", "PrepareForRestore", &event);
        said.push(match run.world.mounted_by(&ns, d) {
            Some(pod) => format!(
                "{d} kept as {orig}, but pod/{pod} still mounts it: the original stays Terminating/Lost"
            ),
            None => format!("{d} kept as {orig} (PV {pv} Retain)"),
        });
    }
    run.stage("keep-disks", list_or_none(&said));
    None
}
