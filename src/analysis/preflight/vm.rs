//! The Velero driver's in-place VM restore, step by step as the controller runs it: halt the VM,
//! keep each disk the Backup records under its `-orig` name, delete the DataVolumes, find or
//! create the Velero Restore by its owner labels.

use super::{DiskForecast, OrigState, Out, foreign_consequence};
use crate::analysis::codes::Severity;
use crate::analysis::controller::Generation;
use crate::analysis::ctx::Ctx;
use crate::analysis::disks::pv_of;
use crate::analysis::report::ObjRef;
use crate::model::names::{
    LABEL_OWNED_BY_NAME, LABEL_OWNED_BY_NAMESPACE, MAX_NAME_LEN, VELERO_NAMESPACE, orig_pvc_name,
    short_hash,
};
use crate::model::ownership::{OrigOwner, OrigRelation, orig_owner, orig_relation};
use crate::model::snapshot::velero_owner_term;
use crate::model::{Field, Kind};

pub(super) struct VmForecast {
    pub disks: Vec<DiskForecast>,
    pub kept_bytes: Option<u64>,
}

pub(super) fn forecast(ctx: &Ctx, exists: bool, g: Generation, out: &mut Out) -> VmForecast {
    let mut f = VmForecast {
        disks: Vec::new(),
        kept_bytes: None,
    };
    predecessor_restore(ctx, exists, out);
    if !ctx.in_place || !ctx.is_vm_instance() {
        // A copy into another namespace halts and renames nothing here.
        return f;
    }
    halt(ctx, out);
    let keep = match ctx.keep_original() {
        Some(k) => k,
        None => {
            out.add(
                "invalid-options",
                Severity::Warning,
                vec![ctx.rj_ref()],
                "spec.options.keepOriginalPVC is not a boolean: the controller fails the RestoreJob (invalid restore options) before touching anything".into(),
                "write keepOriginalPVC as true or false",
            );
            return f;
        }
    };
    let disks = match ctx.backup.map(|b| &b.data_volumes) {
        Some(Field::Known(list)) => list
            .iter()
            .map(|d| d.data_volume.clone())
            .collect::<Vec<_>>(),
        Some(_) => {
            out.unknown(format!(
                "Backup {} has no readable status.underlyingResources: the disks the controller will replace are unknown",
                ctx.backup.map_or("", |b| b.meta.name.as_str())
            ));
            return f;
        }
        None => return f,
    };
    if !keep {
        out.add(
            "keep-original-disabled",
            Severity::Error,
            vec![ctx.rj_ref()],
            format!(
                "keepOriginalPVC is false: the controller will replace {} without keeping a copy of the current data",
                if disks.is_empty() { "the disks".to_string() } else { disks.join(", ") }
            ),
            "leave keepOriginalPVC unset (true) unless the current disks are known to be worthless",
        );
        return f;
    }
    if !out.readable(
        ctx.snap,
        &[Kind::PersistentVolumeClaim, Kind::PersistentVolume],
    ) {
        f.disks = disks
            .iter()
            .map(|d| bare(d, ctx, OrigState::Unknown))
            .collect();
        return f;
    }
    let mut total = Some(0u64);
    for d in &disks {
        let mut disk = keep_disk(ctx, d, g, out);
        hash_collision(ctx, d, out);
        let keeps = matches!(disk.orig_state, OrigState::Free | OrigState::Ours);
        if keeps {
            copy_size(ctx, &mut disk, &mut total);
        }
        f.disks.push(disk);
    }
    f.kept_bytes = total;
    kept_storage(&f, g, out);
    f
}

fn bare(disk: &str, ctx: &Ctx, state: OrigState) -> DiskForecast {
    DiskForecast {
        disk: disk.to_string(),
        orig: orig_pvc_name(disk, &ctx.rj.meta.name),
        orig_state: state,
        pv: None,
        capacity: None,
        storage_class: None,
        class_policy: None,
    }
}

/// The controller finds a RestoreJob's Velero Restore by its owner labels: one left by a
/// deleted RestoreJob of the same name is taken for this one's, and every step is skipped.
fn predecessor_restore(ctx: &Ctx, exists: bool, out: &mut Out) {
    if !out.readable(ctx.snap, &[Kind::VeleroRestore]) {
        return;
    }
    let name = &ctx.rj.meta.name;
    let term = velero_owner_term(Some(ctx.ns), name);
    for r in ctx.snap.velero_restores.by_term(&term) {
        let owned = r.meta.namespace == VELERO_NAMESPACE
            && r.meta.label(LABEL_OWNED_BY_NAME) == Some(name.as_str())
            && r.meta.label(LABEL_OWNED_BY_NAMESPACE) == Some(ctx.ns);
        let before =
            !exists || matches!((r.meta.created, ctx.rj.meta.created), (Some(v), Some(j)) if v < j);
        if owned && before {
            out.add(
                "velero-restore-stale",
                Severity::Error,
                vec![ObjRef::new(Kind::VeleroRestore, VELERO_NAMESPACE, &r.meta.name)],
                format!(
                    "Velero Restore {} ({}) still carries the owner labels of RestoreJob {}/{name}, left by an earlier RestoreJob of this name: the controller will take it for this restore's, skip every step and report Succeeded with nothing restored",
                    r.meta.name,
                    r.phase.as_deref().unwrap_or("no phase"),
                    ctx.ns
                ),
                "use another RestoreJob name, or delete that Velero Restore first",
            );
        }
    }
}

fn halt(ctx: &Ctx, out: &mut Out) {
    let Some(vm) = ctx.vm_name() else { return };
    if !out.readable(ctx.snap, &[Kind::VirtualMachineInstance]) {
        return;
    }
    if ctx.snap.vmis.get(ctx.ns, &vm).is_some() {
        out.add(
            "vm-will-halt",
            Severity::Info,
            vec![ObjRef::new(Kind::VirtualMachineInstance, ctx.ns, &vm)],
            format!("VM {vm} is running: the controller will halt it (runStrategy Halted) and wait until it is down before touching its disks"),
            "plan the downtime; the VM comes back when Velero restores it",
        );
    }
}

/// The `-orig` name of one disk and who holds it.
fn keep_disk(ctx: &Ctx, disk: &str, g: Generation, out: &mut Out) -> DiskForecast {
    let orig = orig_pvc_name(disk, &ctx.rj.meta.name);
    if orig.len() > MAX_NAME_LEN {
        out.add(
            "orig-name-too-long",
            Severity::Error,
            vec![ObjRef::new(Kind::PersistentVolumeClaim, ctx.ns, disk)],
            format!(
                "the -orig name for {disk} would be {} characters (at most {MAX_NAME_LEN}): creating it fails, and {}",
                orig.len(),
                match g {
                    Generation::Guarded => "the controller retries the rename without end (the RestoreJob stays Running)",
                    _ => "an unguarded controller deletes the DataVolume anyway: the disk is not kept",
                }
            ),
            "a shorter RestoreJob name does not help (the hash has a fixed length): copy this disk another way before restoring",
        );
        let mut d = bare(disk, ctx, OrigState::TooLong { length: orig.len() });
        d.orig = orig;
        return d;
    }
    let Some(held) = ctx.snap.pvcs.get(ctx.ns, &orig) else {
        return bare(disk, ctx, OrigState::Free);
    };
    // Only a RestoreJob that exists can own it: a new one is created after every PVC there is.
    let ours = ctx
        .snap
        .restore_jobs
        .get(ctx.ns, &ctx.rj.meta.name)
        .map(|rj| orig_relation(held, rj));
    match ours {
        Some(OrigRelation::Made { .. }) => return bare(disk, ctx, OrigState::Ours),
        Some(OrigRelation::Unknown) => {
            out.unknown(format!(
                "-orig PVC {orig} has no restore-job-uid and no creation time: whether this RestoreJob made it is unknown"
            ));
            return bare(disk, ctx, OrigState::Unknown);
        }
        _ => {}
    }
    let by = match orig_owner(held, ctx.snap.restore_jobs.in_namespace(ctx.ns)) {
        OrigOwner::Restore { rj, .. } if rj.meta.name == ctx.rj.meta.name => {
            format!("an earlier RestoreJob named {}", rj.meta.name)
        }
        OrigOwner::Restore { rj, .. } => format!(
            "RestoreJob {} ({})",
            rj.meta.name,
            match rj.phase.as_str() {
                "" => "not picked up",
                p => p,
            }
        ),
        OrigOwner::Deleted { uid: Some(u) } => format!("a deleted RestoreJob (UID {u})"),
        OrigOwner::Deleted { uid: None } | OrigOwner::Unknown => {
            "an earlier RestoreJob (no restore-job-uid: an older controller's)".to_string()
        }
    };
    let (severity, consequence) = foreign_consequence(g);
    out.add(
        "orig-pvc-foreign",
        severity,
        vec![ObjRef::new(Kind::PersistentVolumeClaim, ctx.ns, &orig)],
        format!("-orig name {orig} for disk {disk} is taken by a PVC of {by}: {consequence}"),
        "use another RestoreJob name (its hash changes the -orig name), or reclaim that PVC first if its data is no longer needed",
    );
    bare(
        disk,
        ctx,
        OrigState::Taken {
            pvc_uid: held.meta.uid.clone(),
            by,
        },
    )
}

/// Another unfinished RestoreJob of another name with the same hash restoring the same disk
/// would use the same `-orig` name.
fn hash_collision(ctx: &Ctx, disk: &str, out: &mut Out) {
    let hash = &ctx.hash;
    for other in ctx.snap.restore_jobs.in_namespace(ctx.ns) {
        if other.meta.name == ctx.rj.meta.name
            || other.phase.is_terminal()
            || &short_hash(&other.meta.name) != hash
        {
            continue;
        }
        let octx = Ctx::new(ctx.snap, ctx.settings, jiff::Timestamp::UNIX_EPOCH, other);
        if crate::analysis::disks::disk_names(&octx)
            .iter()
            .any(|d| d == disk)
        {
            out.add(
                "orig-hash-collision",
                Severity::Error,
                vec![ObjRef::new(Kind::RestoreJob, ctx.ns, &other.meta.name)],
                format!(
                    "RestoreJob {} is still running on disk {disk} and its name hashes to {hash} too: both would keep the disk as {}",
                    other.meta.name,
                    orig_pvc_name(disk, &ctx.rj.meta.name)
                ),
                "use another RestoreJob name",
            );
        }
    }
}

fn copy_size(ctx: &Ctx, d: &mut DiskForecast, total: &mut Option<u64>) {
    let Some(pvc) = ctx.snap.pvcs.get(ctx.ns, &d.disk) else {
        // renamePVC keeps nothing for a disk without a PVC.
        return;
    };
    let pv = pv_of(ctx.snap, pvc);
    d.pv = pv.map(|p| p.meta.name.clone());
    d.capacity = pv
        .and_then(|p| p.capacity.clone())
        .or_else(|| pvc.size().map(str::to_string));
    d.storage_class = pv
        .and_then(|p| p.storage_class.clone())
        .or_else(|| pvc.storage_class.clone());
    d.class_policy = d
        .storage_class
        .as_deref()
        .and_then(|c| ctx.snap.storage_classes.get("", c))
        .and_then(|c| c.effective_reclaim_policy().map(str::to_string));
    *total = match (
        *total,
        d.capacity
            .as_deref()
            .and_then(crate::model::quantity::bytes),
    ) {
        (Some(t), Some(b)) => Some(t + b),
        _ => None,
    };
}

/// What the kept copies will hold, and what deleting them later does to their volumes.
fn kept_storage(f: &VmForecast, g: Generation, out: &mut Out) {
    let kept: Vec<&DiskForecast> = f.disks.iter().filter(|d| d.pv.is_some()).collect();
    if kept.is_empty() {
        return;
    }
    let each: Vec<String> = kept
        .iter()
        .map(|d| {
            format!(
                "{} {} on PV {} (class {}: {})",
                d.disk,
                d.capacity.as_deref().unwrap_or("size unknown"),
                d.pv.as_deref().unwrap_or("?"),
                d.storage_class.as_deref().unwrap_or("none"),
                d.class_policy.as_deref().unwrap_or("policy unknown")
            )
        })
        .collect();
    let total = f
        .kept_bytes
        .map_or("an unknown amount".to_string(), crate::analysis::fmt_bytes);
    let leak = kept
        .iter()
        .any(|d| d.class_policy.as_deref() == Some("Delete"));
    let later = match (leak, g) {
        (false, _) => "their volumes follow their classes' policy once reclaimed",
        (true, Generation::Guarded) => {
            "each PV becomes Retain with its policy recorded: set it back before deleting an -orig PVC (restorewatch action reclaim-orig does), or the volume leaks"
        }
        (true, _) => {
            "each PV becomes Retain; an unguarded controller records no original policy: deleting an -orig PVC later leaks its volume unless the policy is set back first (reclaim-orig asks for it)"
        }
    };
    out.add(
        "kept-storage",
        Severity::Info,
        kept.iter()
            .filter_map(|d| d.pv.as_deref())
            .map(|p| ObjRef::new(Kind::PersistentVolume, "", p))
            .collect(),
        format!(
            "the kept copies will hold {total}: {}; {later}",
            each.join(", ")
        ),
        "budget the storage; reclaim the -orig PVCs once the restore is proven",
    );
}
