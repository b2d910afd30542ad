//! The Velero driver's in-place VM restore, step by step as the controller runs it: halt the VM,
//! keep each disk the Backup records under its `-orig` name, delete the DataVolumes, find or
//! create the Velero Restore by its owner labels.

use super::{DiskForecast, OrigState, Out};
use crate::analysis::codes::Severity;
use crate::analysis::controller::Generation;
use crate::analysis::ctx::Ctx;
use crate::analysis::disks::pv_of;
use crate::analysis::report::ObjRef;
use crate::model::names::{MAX_NAME_LEN, orig_pvc_name};
use crate::model::ownership::{OrigOwner, OrigRelation, orig_owner, orig_relation};
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
    let _ = exists;
    if !ctx.in_place || !ctx.is_vm_instance() {
        // A copy into another namespace halts and renames nothing here.
        return f;
    }
    halt(ctx, out);
    let keep = match ctx.keep_original() {
        Some(k) => k,
        // Not a boolean: the controller fails the RestoreJob before touching anything (the
        // forecast's `validate` step, judged by the analysis as malformed-options).
        None => return f,
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
        // keep-original-disabled is the analysis' finding on the forecast's states.
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
        let mut disk = keep_disk(ctx, d, out);
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
fn keep_disk(ctx: &Ctx, disk: &str, out: &mut Out) -> DiskForecast {
    let orig = orig_pvc_name(disk, &ctx.rj.meta.name);
    if orig.len() > MAX_NAME_LEN {
        // orig-name-too-long is the analysis' finding on the forecast's states.
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
    // What a taken name leads to (orig-pvc-foreign, disk-not-kept, a failed RestoreJob) is
    // the analysis' finding on the forecast's states; the disk table says who holds it.
    bare(
        disk,
        ctx,
        OrigState::Taken {
            pvc_uid: held.meta.uid.to_string(),
            by,
        },
    )
}

fn copy_size(ctx: &Ctx, d: &mut DiskForecast, total: &mut Option<u64>) {
    let Some(pvc) = ctx.snap.pvcs.get(ctx.ns, &d.disk) else {
        // renamePVC keeps nothing for a disk without a PVC.
        return;
    };
    let pv = pv_of(ctx.snap, pvc);
    d.pv = pv.map(|p| p.meta.name.to_string());
    d.capacity = pv
        .and_then(|p| p.capacity.as_deref())
        .or_else(|| pvc.size())
        .map(str::to_string);
    d.storage_class = pv
        .and_then(|p| p.storage_class.as_deref())
        .or(pvc.storage_class.as_deref())
        .map(str::to_string);
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
