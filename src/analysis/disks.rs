//! The disks of a VM restore and what became of each: DataVolume -> PVC -> PV, the `-orig` PVC
//! that should keep it, and the DataDownload that should refill it.

use super::ctx::Ctx;
use super::report::{DiskChain, DownloadInfo, DvInfo, Ownership, Progress, PvInfo, PvcInfo};
use crate::cluster::Snapshot;
use crate::cluster::snapshot::{claim_term, restore_name_term, restore_uid_term};
use crate::model::names::{
    ANN_ORIGINAL_RECLAIM_POLICY, ANN_RESTORE_JOB_UID, LABEL_VELERO_RESTORE_NAME,
    LABEL_VELERO_RESTORE_UID, VELERO_NAMESPACE, orig_pvc_name, vm_disk_name,
};
use crate::model::objects::{DataDownload, Pv, Pvc, RestoreJob};
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

/// Like `kind_observed`, but a dump must hold an object of this very kind.
pub fn kind_present(snap: &Snapshot, kind: Kind) -> bool {
    match snap.health.get(&kind) {
        Some(_) => kind_observed(snap, kind),
        None => snap.objects.len(kind) > 0,
    }
}

/// The disks a VM restore covers: the Backup's record, else the VM's volumes, else the
/// `vm-disk-*` DataVolumes and PVCs of the namespace.
pub fn disk_names(ctx: &Ctx) -> Vec<String> {
    if ctx.target_kind() == Some("VMDisk") {
        return ctx.app().map(vm_disk_name).into_iter().collect();
    }
    if let Some(Field::Known(list)) = ctx.backup.map(|b| &b.data_volumes)
        && !list.is_empty()
    {
        return list.iter().map(|d| d.data_volume.clone()).collect();
    }
    if let Some(vm) = ctx.vm_name().and_then(|n| ctx.snap.vms.get(ctx.ns, &n)) {
        let disks: Vec<String> = vm
            .disk_claims
            .iter()
            .filter(|c| c.starts_with("vm-disk-"))
            .cloned()
            .collect();
        if !disks.is_empty() {
            return disks;
        }
    }
    let mut names: Vec<String> = ctx
        .snap
        .data_volumes
        .in_namespace(ctx.ns)
        .map(|d| d.meta.name.clone())
        .chain(
            ctx.snap
                .pvcs
                .in_namespace(ctx.ns)
                .map(|p| p.meta.name.clone()),
        )
        .filter(|n| n.starts_with("vm-disk-") && crate::model::names::parse_orig_name(n).is_none())
        .collect();
    names.sort();
    names.dedup();
    names
}

pub fn ownership(orig: &Obj<Pvc>, rj: &Obj<RestoreJob>) -> Ownership {
    match orig.meta.annotation(ANN_RESTORE_JOB_UID) {
        Some(uid) if uid == rj.meta.uid => Ownership::Ours { annotated: true },
        Some(uid) => Ownership::Foreign {
            other_uid: Some(uid.to_string()),
        },
        // Without the annotation (controller before the fix) only the age tells: a PVC older
        // than the RestoreJob cannot be its work.
        None => match (orig.meta.created, rj.meta.created) {
            (Some(o), Some(r)) if o >= r => Ownership::Ours { annotated: false },
            (Some(_), Some(_)) => Ownership::Foreign { other_uid: None },
            _ => Ownership::Unknown,
        },
    }
}

pub fn pvc_info(p: &Obj<Pvc>) -> PvcInfo {
    PvcInfo {
        name: p.meta.name.clone(),
        uid: p.meta.uid.clone(),
        phase: p.phase.clone(),
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
        name: p.meta.name.clone(),
        phase: p.phase.clone(),
        reclaim_policy: p.reclaim_policy.clone(),
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

/// DataDownloads of the RestoreJob's Velero Restore.
pub fn downloads<'a>(ctx: &Ctx<'a>) -> Vec<&'a Arc<Obj<DataDownload>>> {
    let Some(restore) = ctx.velero else {
        return Vec::new();
    };
    let uid = restore.meta.uid.as_str();
    // Candidates from the index (every DataDownload the filter below can accept carries one
    // of these terms), then the same filter, in the same name order as a namespace scan.
    let store = &ctx.snap.data_downloads;
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
                && d.target_namespace.as_deref().is_none_or(|n| n == ctx.ns)
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
                name: d.meta.name.clone(),
                phase: d.phase.clone(),
                progress: d.progress.clone(),
            }),
            pvc: self.pvc.map(|p| pvc_info(p)),
            pv: self.pv.map(|p| pv_info(p)),
            orig_name: self.orig_name.clone(),
            orig: self.orig.map(|p| pvc_info(p)),
            orig_ownership: self.ownership.clone(),
            orig_pv: self.orig_pv.map(|p| pv_info(p)),
            download: self.download.map(|d| DownloadInfo {
                name: d.meta.name.clone(),
                phase: d.phase.clone(),
                progress: progress_of(d),
            }),
        }
    }
}

pub fn build_disks<'a>(ctx: &Ctx<'a>) -> Vec<Disk<'a>> {
    let snap = ctx.snap;
    let dds = downloads(ctx);
    disk_names(ctx)
        .into_iter()
        .map(|name| {
            let orig_name = orig_pvc_name(&name, &ctx.rj.meta.name);
            let pvc = snap.pvcs.get(ctx.ns, &name);
            let orig = snap.pvcs.get(ctx.ns, &orig_name);
            let orig_pv = orig.and_then(|o| pv_of(snap, o));
            let ownership = orig.map(|o| ownership(o, ctx.rj));
            let rename = match (&ownership, orig) {
                (None, _) | (_, None) => Rename::NotStarted,
                (Some(Ownership::Foreign { .. }), _) => Rename::Foreign,
                (Some(Ownership::Unknown), _) => Rename::Unknown,
                (Some(Ownership::Ours { .. }), Some(o)) => {
                    rename_state(o, orig_pv.map(|p| &**p), pvc.map(|p| &**p), snap)
                }
            };
            Disk {
                dv: snap.data_volumes.get(ctx.ns, &name),
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

fn orig_base(orig: &Obj<Pvc>) -> &str {
    crate::model::names::parse_orig_name(&orig.meta.name)
        .map(|(b, _)| b)
        .unwrap_or(&orig.meta.name)
}
