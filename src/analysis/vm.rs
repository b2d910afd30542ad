//! In-place (and copy) VM restores through the Velero driver: what the rules share; the steps
//! are in `vm_steps`, the findings in `vm_findings`.

use super::ctx::Ctx;
use super::disks::{Disk, DiskSource, build_disks, disk_source, kind_observed};
use super::emit::Findings;
use super::report::Step;
use crate::model::Kind;
use crate::model::names::{vm_disk_name, vm_instance_release};

pub struct VmOutcome<'a> {
    pub steps: Vec<Step>,
    pub disks: Vec<Disk<'a>>,
    /// See `keeps_disks`.
    pub keeps: bool,
}

/// Whether the controller keeps this restore's current disks as `-orig` PVCs (unless
/// `keepOriginalPVC: false`): in place, for a VMInstance, or for any application whose Backup
/// records its disks (the rename follows the record, not the kind: report 000 on #3427).
pub fn keeps_disks(ctx: &Ctx, source: &DiskSource) -> bool {
    ctx.in_place && (ctx.is_vm_instance() || *source == DiskSource::Backup)
}

/// Why the disks of a restore are unknown, when they are.
pub(super) fn unknown_disks(source: &DiskSource) -> Option<&str> {
    match source {
        DiskSource::Unknown(why) => Some(why.as_str()),
        _ => None,
    }
}

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
    let (names, source) = disk_source(ctx);
    let keeps = keeps_disks(ctx, &source);
    let disks = build_disks(ctx, names);
    let steps = super::vm_steps::steps(ctx, &disks, unknown_disks(&source), keeps);
    super::vm_findings::findings(ctx, &disks, keeps, out);
    super::velero_backup::findings(ctx, out);
    VmOutcome {
        steps,
        disks,
        keeps,
    }
}

/// Evidence that the restore went past the halt step.
pub(super) struct Past {
    pub renamed: bool,
    pub dv_deleted: bool,
    pub velero: bool,
}

impl Past {
    pub fn any(&self) -> bool {
        self.renamed || self.dv_deleted || self.velero
    }
}

pub(super) fn past(ctx: &Ctx, disks: &[Disk]) -> Past {
    Past {
        renamed: disks.iter().any(|d| d.ours()),
        // All of them: one DataVolume missing before the restore is no evidence it went on.
        dv_deleted: kind_observed(ctx.snap, Kind::DataVolume)
            && !disks.is_empty()
            && disks.iter().all(|d| d.dv.is_none()),
        velero: ctx.velero.is_some(),
    }
}
/// A rename in progress is not a half-done one: it counts as stopped once the restore moved
/// on, finished, or the `-orig` PVC is older than the grace period.
pub(super) fn half_done_settled(ctx: &Ctx, d: &Disk, past: &Past) -> bool {
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

/// What still runs on a disk's pre-restore PVC once the rename took it (our `-orig` PVC exists
/// and the original, from before the RestoreJob, is being deleted, `Lost`, or no longer claimed
/// by its PV): VirtualMachines of any application whose VMI exists, else Pods. The restore's
/// own VM is left to `vm-not-halted`. Empty when nothing does or the rename did not start.
pub(super) fn live_users_of_renamed(ctx: &Ctx, d: &Disk) -> Vec<String> {
    if !d.ours() {
        return Vec::new();
    }
    let Some(original) = d
        .pvc
        .filter(|p| matches!((p.meta.created, ctx.rj.meta.created), (Some(c), Some(r)) if c < r))
    else {
        return Vec::new();
    };
    let taken = original.meta.deleted.is_some()
        || original.phase.as_deref() == Some("Lost")
        || d.orig_pv
            .and_then(|pv| pv.claim_ref.as_ref())
            .is_some_and(|c| c.name == d.orig_name);
    if !taken {
        return Vec::new();
    }
    let own_vm = ctx.is_vm_instance().then(|| ctx.vm_name()).flatten();
    let mut users: Vec<String> = ctx
        .snap
        .vms
        .in_namespace(ctx.ns)
        .filter(|vm| Some(vm.meta.name.as_str()) != own_vm.as_deref())
        .filter(|vm| vm.disk_claims.iter().any(|c| c == &d.name))
        .filter_map(|vm| {
            let vmi = ctx.snap.vmis.get(ctx.ns, &vm.meta.name)?;
            Some(format!(
                "VM {} (VMI {}, runStrategy {})",
                vm.meta.name,
                vmi.phase.display(),
                vm.run_strategy.display()
            ))
        })
        .collect();
    if users.is_empty() {
        users = ctx
            .snap
            .pods
            .in_namespace(ctx.ns)
            .filter(|p| !p.is_finished())
            .filter(|p| p.claims.iter().any(|c| c == &d.name))
            .filter(|p| {
                !p.meta.owners.iter().any(|o| {
                    o.kind == "VirtualMachineInstance" && Some(o.name.as_str()) == own_vm.as_deref()
                })
            })
            .map(|p| format!("Pod {} ({})", p.meta.name, p.phase.display()))
            .collect();
    }
    users
}
