//! The disks of a VM restore and what became of each: DataVolume -> PVC -> PV, the `-orig` PVC
//! that should keep it, and the DataDownload that should refill it.

use super::ctx::Ctx;
use super::report::{DiskChain, DownloadInfo, DvInfo, Ownership, Progress, PvInfo, PvcInfo};
use crate::model::names::{
    ANN_ORIGINAL_RECLAIM_POLICY, ANN_RESTORE_JOB_UID, LABEL_VELERO_RESTORE_NAME,
    LABEL_VELERO_RESTORE_UID, VELERO_NAMESPACE, orig_pvc_name, vm_disk_name,
};
use crate::model::objects::{DataDownload, Pv, Pvc, RestoreJob, VeleroRestore};
use crate::model::ownership::{OrigRelation, orig_relation};
use crate::model::snapshot::Snapshot;
use crate::model::snapshot::{claim_term, restore_name_term, restore_uid_term};
use crate::model::{Field, Kind, Obj};
use std::sync::Arc;

/// Whether the snapshot can tell that an object of this kind is absent: a live kind that
/// synced, or a dump that holds objects of the kind's API group (a dump without any
/// `cdi.kubevirt.io` object says nothing about DataVolumes).
pub fn kind_observed(snap: &Snapshot, kind: Kind) -> bool {
    // A kind that never listed (its first list failed) is unknown, not empty.
    match snap.absence_known(kind) {
        Some(known) => known,
        None => {
            let group = kind.info().group;
            crate::model::KINDS
                .iter()
                .filter(|k| k.group == group)
                .any(|k| snap.objects.len(k.kind) > 0)
        }
    }
}

/// Where a VM restore's disk list came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskSource {
    /// A VMDisk restore whose Backup records no disk: the one disk of the application, which
    /// the controller does not keep.
    VmDisk,
    /// The Backup's `status.underlyingResources`: what the controller itself restores.
    Backup,
    /// The `vm-disk-*` claims among the VirtualMachine's volumes.
    VmVolumes,
    /// Neither: the disks are unknown and none is analysed. The string says why.
    Unknown(String),
}

/// The disks a VM restore covers: the Backup's record, else the VM's `vm-disk-*` volumes. With
/// neither the disks are unknown: disk names are the user's, so taking the `vm-disk-*` PVCs of
/// the namespace would claim other applications' disks.
pub fn disk_source(ctx: &Ctx) -> (Vec<String>, DiskSource) {
    // The controller renames and restores what the Backup records, whatever the application
    // kind (a VMDisk Backup lists its own disk since #3427).
    if let Some(Field::Known(list)) = ctx.backup.map(|b| &b.data_volumes)
        && !list.is_empty()
    {
        return (
            list.iter().map(|d| d.data_volume.clone()).collect(),
            DiskSource::Backup,
        );
    }
    if ctx.target_kind() == Some("VMDisk") {
        return (
            ctx.app().map(vm_disk_name).into_iter().collect(),
            DiskSource::VmDisk,
        );
    }
    let vm_name = ctx.vm_name();
    let vm = vm_name.as_deref().and_then(|n| ctx.snap.vms.get(ctx.ns, n));
    if let Some(vm) = vm {
        let disks: Vec<String> = vm
            .disk_claims
            .iter()
            .filter(|c| c.starts_with("vm-disk-"))
            .cloned()
            .collect();
        if !disks.is_empty() {
            return (disks, DiskSource::VmVolumes);
        }
    }
    let backup = match (ctx.backup, ctx.rj.backup_ref.as_deref()) {
        (Some(b), _) => format!("Backup {} has no status.underlyingResources", b.meta.name),
        (None, Some(b)) => format!("Backup {b} is not there"),
        (None, None) => "the RestoreJob names no Backup".to_string(),
    };
    let vm = match (vm, vm_name) {
        (Some(v), _) => format!("VM {} has no vm-disk-* volumes", v.meta.name),
        (None, Some(n)) => format!("VM {n} is not there"),
        (None, None) => "no target VM".to_string(),
    };
    (
        Vec::new(),
        DiskSource::Unknown(format!(
            "disks unknown: {backup} and {vm} (the controller takes the disks from the Backup's record); no disk analysed"
        )),
    )
}

/// The disks a VM restore covers (empty when unknown, see `disk_source`).
pub fn disk_names(ctx: &Ctx) -> Vec<String> {
    disk_source(ctx).0
}

/// Whether `rj` made `orig` (see `model::ownership::orig_relation`, shared with the actions).
pub fn ownership(orig: &Obj<Pvc>, rj: &Obj<RestoreJob>) -> Ownership {
    match orig_relation(orig, rj) {
        OrigRelation::Made { annotated } => Ownership::Ours { annotated },
        OrigRelation::NotMade { other_uid } => Ownership::Foreign { other_uid },
        OrigRelation::Unknown => Ownership::Unknown,
    }
}

pub fn pvc_info(p: &Obj<Pvc>) -> PvcInfo {
    PvcInfo {
        name: p.meta.name.to_string(),
        uid: p.meta.uid.to_string(),
        phase: p.phase.clone().map(|s| s.to_string()),
        volume: p.volume_name.clone(),
        created: p.meta.created,
        deleting: p.meta.deleted.is_some(),
        restore_job_uid: p.meta.annotation(ANN_RESTORE_JOB_UID).map(str::to_string),
        recorded_policy: p
            .meta
            .annotation(ANN_ORIGINAL_RECLAIM_POLICY)
            .map(str::to_string),
    }
}

pub fn pv_info(p: &Obj<Pv>) -> PvInfo {
    PvInfo {
        name: p.meta.name.to_string(),
        phase: p.phase.clone().map(|s| s.to_string()),
        reclaim_policy: p.reclaim_policy.clone().map(|s| s.to_string()),
        claim: p
            .claim_ref
            .as_ref()
            .map(|c| (format!("{}/{}", c.namespace, c.name), c.uid.clone())),
        recorded_policy: p
            .meta
            .annotation(ANN_ORIGINAL_RECLAIM_POLICY)
            .map(str::to_string),
    }
}

/// The PV behind a PVC: its `volumeName`, else a PV whose claimRef names it.
pub fn pv_of<'a>(snap: &'a Snapshot, pvc: &Obj<Pvc>) -> Option<&'a Arc<Obj<Pv>>> {
    if let Some(v) = pvc.volume_name.as_deref() {
        return snap.pvs.get("", v);
    }
    // The first PV, in name order, whose claimRef names the PVC (an index, not a scan: this
    // runs for every disk of every restore).
    snap.pvs
        .by_term(&claim_term(&pvc.meta.namespace, &pvc.meta.name))
        .iter()
        .find(|pv| {
            pv.claim_ref
                .as_ref()
                .is_some_and(|c| c.namespace == pvc.meta.namespace && c.name == pvc.meta.name)
        })
}

/// DataDownloads of the RestoreJob's Velero Restore (never one created before the RestoreJob:
/// that is a predecessor's, whatever it carries).
pub fn downloads<'a>(ctx: &Ctx<'a>) -> Vec<&'a Arc<Obj<DataDownload>>> {
    match ctx.velero {
        Some(restore) => downloads_of(ctx.snap, restore)
            .into_iter()
            .filter(|d| !super::ctx::predates(d.meta.created, ctx.rj.meta.created))
            .collect(),
        None => Vec::new(),
    }
}

/// DataDownloads of one Velero Restore: its `restore-uid` label, its ownerReference, or its
/// `restore-name` label.
pub fn downloads_of<'a>(
    snap: &'a Snapshot,
    restore: &Obj<VeleroRestore>,
) -> Vec<&'a Arc<Obj<DataDownload>>> {
    let uid = restore.meta.uid.as_str();
    // Candidates from the index (every DataDownload the filter below can accept carries one
    // of these terms), then the same filter, in the same name order as a namespace scan.
    let store = &snap.data_downloads;
    let mut candidates: Vec<&'a Arc<Obj<DataDownload>>> = store
        .by_term(&restore_name_term(&restore.meta.name))
        .iter()
        .chain(if uid.is_empty() {
            [].iter()
        } else {
            store.by_term(&restore_uid_term(uid)).iter()
        })
        .filter(|d| d.meta.namespace == VELERO_NAMESPACE)
        .collect();
    candidates.sort_by(|a, b| a.meta.name.cmp(&b.meta.name));
    candidates.dedup_by(|a, b| Arc::ptr_eq(a, b));
    candidates
        .into_iter()
        .filter(|d| {
            (!uid.is_empty() && d.meta.label(LABEL_VELERO_RESTORE_UID) == Some(uid))
                || d.meta
                    .owners
                    .iter()
                    .any(|o| !uid.is_empty() && o.uid == uid)
                || d.meta.label(LABEL_VELERO_RESTORE_NAME) == Some(restore.meta.name.as_str())
        })
        .collect()
}

pub fn download_for<'a>(
    ctx: &Ctx,
    dds: &[&'a Arc<Obj<DataDownload>>],
    disk: &str,
) -> Option<&'a Arc<Obj<DataDownload>>> {
    // A retried download may exist next to a failed one: prefer the furthest along.
    dds.iter()
        .copied()
        .filter(|d| {
            d.target_pvc.as_deref() == Some(disk)
                && d.target_namespace
                    .as_deref()
                    .is_none_or(|n| n == ctx.dest_ns())
        })
        .max_by_key(|d| (d.is_completed(), !d.is_failed(), d.meta.created))
}

pub fn progress_of(d: &DataDownload) -> Option<Progress> {
    let total = u64::try_from(d.total_bytes?).ok()?;
    let done = u64::try_from(d.bytes_done.unwrap_or(0)).ok()?;
    Some(Progress { done, total })
}

/// How far the rename of one disk got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rename {
    /// No `-orig` PVC of ours yet.
    NotStarted,
    /// `-orig` PVC Bound, PV claimed by it, original released.
    Complete,
    /// Our `-orig` PVC exists but the rename stopped: why.
    HalfDone(Vec<String>),
    /// The rename's writes are all done (the PV's claimRef names the `-orig` PVC's name and
    /// UID, the original PVC is gone) and the `-orig` PVC is still `Pending`: the PV
    /// controller binds it on its resync, up to ~15 s later on a real cluster. Since when.
    AwaitingBind(Option<jiff::Timestamp>),
    /// The `-orig` name is held by a PVC that is not ours.
    Foreign,
    /// An `-orig` PVC of unknown provenance (no annotation, no timestamps).
    Unknown,
}

/// Everything the rules need about one disk.
pub struct Disk<'a> {
    pub name: String,
    pub orig_name: String,
    pub dv: Option<&'a Arc<Obj<crate::model::objects::DataVolume>>>,
    pub pvc: Option<&'a Arc<Obj<Pvc>>>,
    pub pv: Option<&'a Arc<Obj<Pv>>>,
    pub orig: Option<&'a Arc<Obj<Pvc>>>,
    pub orig_pv: Option<&'a Arc<Obj<Pv>>>,
    pub ownership: Option<Ownership>,
    pub rename: Rename,
    pub download: Option<&'a Arc<Obj<DataDownload>>>,
}

impl Disk<'_> {
    pub fn ours(&self) -> bool {
        matches!(self.ownership, Some(Ownership::Ours { .. }))
    }

    pub fn chain(&self) -> DiskChain {
        DiskChain {
            disk: self.name.clone(),
            data_volume: self.dv.map(|d| DvInfo {
                name: d.meta.name.to_string(),
                phase: d.phase.clone().map(|s| s.to_string()),
                progress: d.progress.as_deref().map(str::to_string),
            }),
            pvc: self.pvc.map(|p| pvc_info(p)),
            pv: self.pv.map(|p| pv_info(p)),
            orig_name: self.orig_name.clone(),
            orig: self.orig.map(|p| pvc_info(p)),
            orig_ownership: self.ownership.clone(),
            orig_pv: self.orig_pv.map(|p| pv_info(p)),
            download: self.download.map(|d| DownloadInfo {
                name: d.meta.name.to_string(),
                phase: d.phase.clone(),
                progress: progress_of(d),
            }),
        }
    }
}

pub fn build_disks<'a>(ctx: &Ctx<'a>, names: Vec<String>) -> Vec<Disk<'a>> {
    let snap = ctx.snap;
    let dds = downloads(ctx);
    // A copy's disks are the ones it writes, in its target namespace.
    let ns = ctx.dest_ns();
    names
        .into_iter()
        .map(|name| {
            let orig_name = orig_pvc_name(&name, &ctx.rj.meta.name);
            let pvc = snap.pvcs.get(ns, &name);
            let orig = snap.pvcs.get(ns, &orig_name);
            let orig_pv = orig.and_then(|o| pv_of(snap, o));
            let ownership = orig.map(|o| ownership(o, ctx.rj));
            let rename = match (&ownership, orig) {
                (None, _) | (_, None) => Rename::NotStarted,
                (Some(Ownership::Foreign { .. }), _) => Rename::Foreign,
                (Some(Ownership::Unknown), _) => Rename::Unknown,
                (Some(Ownership::Ours { .. }), Some(o)) => {
                    // A PVC of the disk's name made after the RestoreJob is Velero's restored
                    // one, not the original the rename replaced.
                    let original = pvc.filter(|p| {
                        p.meta.deleted.is_some()
                            || !matches!((p.meta.created, ctx.rj.meta.created), (Some(p), Some(r)) if p > r)
                    });
                    rename_state(o, orig_pv.map(|p| &**p), original.map(|p| &**p), snap)
                }
            };
            Disk {
                dv: snap.data_volumes.get(ns, &name),
                pv: pvc.and_then(|p| pv_of(snap, p)),
                download: download_for(ctx, &dds, &name),
                name,
                orig_name,
                pvc,
                orig,
                orig_pv,
                ownership,
                rename,
            }
        })
        .collect()
}

fn rename_state(
    orig: &Obj<Pvc>,
    pv: Option<&Obj<Pv>>,
    original: Option<&Obj<Pvc>>,
    snap: &Snapshot,
) -> Rename {
    if let Some(since) = awaiting_bind(orig, pv, original, snap) {
        return Rename::AwaitingBind(since);
    }
    let mut why = Vec::new();
    if orig.phase.as_deref() == Some("Pending") {
        why.push("-orig PVC Pending".to_string());
    }
    match pv {
        None if kind_observed(snap, Kind::PersistentVolume) => {
            why.push(format!(
                "PV {} not found",
                orig.volume_name.as_deref().unwrap_or("(no volumeName)")
            ));
        }
        None => {}
        Some(pv) => {
            let claim = pv.claim_ref.as_ref();
            let points_at_orig = claim.is_some_and(|c| {
                c.namespace == orig.meta.namespace
                    && c.name == orig.meta.name
                    && c.uid.as_deref().is_none_or(|u| u == orig.meta.uid)
            });
            let original_claims = match (claim, original) {
                (Some(c), Some(o)) => {
                    c.namespace == o.meta.namespace
                        && c.name == o.meta.name
                        && c.uid.as_deref().is_none_or(|u| u == o.meta.uid)
                }
                _ => false,
            };
            if original_claims {
                why.push(format!(
                    "original PVC {} still claims PV {}",
                    orig_base(orig),
                    pv.meta.name
                ));
            } else if !points_at_orig {
                let to = claim.map_or("nothing".to_string(), |c| {
                    format!("{}/{}", c.namespace, c.name)
                });
                let uid_note = claim
                    .filter(|c| c.name == orig.meta.name)
                    .map(|_| " with another UID")
                    .unwrap_or("");
                why.push(format!(
                    "PV {} claimRef points at {to}{uid_note}",
                    pv.meta.name
                ));
            }
        }
    }
    if why.is_empty() {
        Rename::Complete
    } else {
        Rename::HalfDone(why)
    }
}

/// The last write of a rename points the PV at the `-orig` PVC; the binding that follows is
/// the PV controller's. `Some(since)` when only that binding is left.
fn awaiting_bind(
    orig: &Obj<Pvc>,
    pv: Option<&Obj<Pv>>,
    original: Option<&Obj<Pvc>>,
    snap: &Snapshot,
) -> Option<Option<jiff::Timestamp>> {
    let pv = pv?;
    let claim = pv.claim_ref.as_ref()?;
    let names_orig = claim.namespace == orig.meta.namespace
        && claim.name == orig.meta.name
        && !orig.meta.uid.is_empty()
        && claim.uid.as_deref() == Some(orig.meta.uid.as_str());
    let original_gone = original.is_none() && kind_observed(snap, Kind::PersistentVolumeClaim);
    (names_orig && original_gone && orig.phase.as_deref() == Some("Pending")).then(|| {
        [orig.meta.created, pv.meta.last_change]
            .into_iter()
            .flatten()
            .max()
    })
}

fn orig_base(orig: &Obj<Pvc>) -> &str {
    crate::model::names::parse_orig_name(&orig.meta.name)
        .map(|(b, _)| b)
        .unwrap_or(&orig.meta.name)
}
