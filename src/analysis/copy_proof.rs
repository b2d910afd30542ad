//! Whether an `-orig` PVC's disk is proven restored: the one rule the findings, the `-orig`
//! screen, the bulk reclaim and reclaim-orig all read. Deleting an `-orig` PVC is irreversible,
//! so only positive evidence counts: every link from the RestoreJob that made the copy to a
//! Completed DataDownload into the restored PVC must be there and belong to this restore.
//! Anything absent, unreadable or older than the RestoreJob leaves the copy unproven: it may be
//! the only one.

use super::ctx::velero_restores_for;
use super::disks::{downloads_of, kind_observed};
use crate::model::names::parse_orig_name;
use crate::model::objects::{DataDownload, Pvc, RestoreJob, RjPhase};
use crate::model::ownership::{OrigOwner, orig_owner};
use crate::model::snapshot::Snapshot;
use crate::model::{Kind, Obj};
use jiff::Timestamp;
use std::sync::Arc;

/// What proves a restored copy: the DataDownload that filled the restored PVC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoredCopy {
    pub restore_job: String,
    pub restored_pvc: String,
    pub download: String,
    pub bytes: Option<u64>,
    pub completed: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyProof {
    Proven(RestoredCopy),
    /// The missing piece, with real names.
    NotProven(String),
    /// A kind the proof needs could not be read: unknown, which refuses like unproven.
    Unknown(String),
}

impl CopyProof {
    pub fn is_proven(&self) -> bool {
        matches!(self, CopyProof::Proven(_))
    }

    /// Why it is not proven, or `None` when it is.
    pub fn missing(&self) -> Option<&str> {
        match self {
            CopyProof::Proven(_) => None,
            CopyProof::NotProven(m) | CopyProof::Unknown(m) => Some(m),
        }
    }

    /// One line for the `-orig` screen and the plan notes.
    pub fn describe(&self) -> String {
        match self {
            CopyProof::Proven(c) => format!(
                "restored copy proven: DataDownload {} Completed{}{} into {}",
                c.download,
                c.bytes
                    .map(|b| format!(" ({})", super::ctx::fmt_bytes(b)))
                    .unwrap_or_default(),
                c.completed
                    .map(|t| format!(" at {}", t.strftime("%Y-%m-%d %H:%M UTC")))
                    .unwrap_or_default(),
                c.restored_pvc
            ),
            CopyProof::NotProven(m) => format!("restored copy not proven: {m}"),
            CopyProof::Unknown(m) => format!("restored copy unknown: {m}"),
        }
    }
}

/// What would prove the copy of `base` restored, for a remedy.
pub fn what_proves(base: &str) -> String {
    format!(
        "the RestoreJob that made it Succeeded, the restored {base} Bound and created after that RestoreJob started, and a Completed DataDownload of its own Velero Restore into {base}"
    )
}

fn unread(snap: &Snapshot, kind: Kind) -> Option<CopyProof> {
    (!kind_observed(snap, kind)).then(|| {
        CopyProof::Unknown(format!(
            "{} could not be read: nothing proves the restore",
            kind.info().plural
        ))
    })
}

/// Whether the disk an `-orig` PVC keeps is proven restored (see the module's comment).
pub fn copy_proof(snap: &Snapshot, orig: &Obj<Pvc>) -> CopyProof {
    let Some((base, _)) = parse_orig_name(&orig.meta.name) else {
        return CopyProof::NotProven(format!("{} is not an -orig PVC", orig.meta.name));
    };
    let ns = orig.meta.namespace.as_str();
    if let Some(u) = unread(snap, Kind::RestoreJob) {
        return u;
    }
    let rj = match orig_owner(orig, snap.restore_jobs.in_namespace(ns)) {
        OrigOwner::Restore { rj, .. } => rj,
        OrigOwner::Deleted { .. } => {
            return CopyProof::NotProven(
                "the RestoreJob that made this copy was deleted: nothing left proves the restore"
                    .into(),
            );
        }
        OrigOwner::Unknown => {
            return CopyProof::NotProven(format!(
                "which RestoreJob made {} cannot be told (no restore-job-uid, no creation time)",
                orig.meta.name
            ));
        }
    };
    let name = &rj.meta.name;
    if rj.phase != RjPhase::Succeeded {
        let phase = match rj.phase.as_str() {
            "" => "new",
            p => p,
        };
        return CopyProof::NotProven(format!(
            "RestoreJob {name} that made this copy is {phase}, not Succeeded"
        ));
    }
    let Some(started) = rj.started_at.known().copied().or(rj.meta.created) else {
        return CopyProof::NotProven(format!("RestoreJob {name} has no start time"));
    };
    if let Some(u) = unread(snap, Kind::PersistentVolumeClaim) {
        return u;
    }
    let Some(restored) = snap.pvcs.get(ns, base) else {
        return CopyProof::NotProven(format!("the restored {base} does not exist"));
    };
    if restored.phase.as_deref() != Some("Bound") {
        return CopyProof::NotProven(format!(
            "the restored {base} is {}, not Bound",
            restored.phase.display()
        ));
    }
    // A restored PVC on its way out is no copy: once it and the -orig PVC are both deleted,
    // nothing is left.
    if let Some(at) = restored.meta.deleted {
        return CopyProof::NotProven(format!(
            "the restored {base} is being deleted (deletionTimestamp {at}): it will not stay as the copy"
        ));
    }
    if restored.meta.created.is_none_or(|c| c < started) {
        return CopyProof::NotProven(format!(
            "{base} was not created after RestoreJob {name} started: it is not the restored disk"
        ));
    }
    if let Some(u) = unread(snap, Kind::VeleroRestore).or_else(|| unread(snap, Kind::DataDownload))
    {
        return u;
    }
    download_proof(snap, rj, base, restored.volume_name.as_deref())
}

/// The last link: a Completed DataDownload of this restore's own Velero Restore into `base`.
fn download_proof(
    snap: &Snapshot,
    rj: &Obj<RestoreJob>,
    base: &str,
    restored_pv: Option<&str>,
) -> CopyProof {
    let ns = rj.meta.namespace.as_str();
    let name = &rj.meta.name;
    let after_rj =
        |t: Option<Timestamp>| matches!((t, rj.meta.created), (Some(t), Some(c)) if t >= c);
    let into_base = |d: &&Arc<Obj<DataDownload>>| {
        // Proof needs the DataDownload to name this namespace: one that names none may have
        // filled a PVC of the same name anywhere.
        d.target_pvc.as_deref() == Some(base) && d.target_namespace.as_deref() == Some(ns)
    };
    let (own, older): (Vec<_>, Vec<_>) = velero_restores_for(snap, ns, name)
        .into_iter()
        .partition(|r| after_rj(r.meta.created));
    let Some(restore) = own.iter().max_by_key(|r| r.meta.created) else {
        return CopyProof::NotProven(
            match older
                .iter()
                .find_map(|r| downloads_of(snap, r).into_iter().find(into_base))
            {
                Some(d) => format!(
                    "the DataDownload {} belongs to a Velero Restore created before this RestoreJob",
                    d.meta.name
                ),
                None => format!("no Velero Restore of RestoreJob {name} created after it"),
            },
        );
    };
    let dds: Vec<_> = own
        .iter()
        .flat_map(|r| downloads_of(snap, r))
        .filter(into_base)
        .collect();
    let Some(dd) = dds
        .iter()
        .max_by_key(|d| (d.is_completed(), after_rj(d.meta.created), d.meta.created))
    else {
        return CopyProof::NotProven(format!(
            "no DataDownload for {base} (Velero Restore {})",
            restore.meta.name
        ));
    };
    if !after_rj(dd.meta.created) {
        return CopyProof::NotProven(format!(
            "the DataDownload {} was created before RestoreJob {name}",
            dd.meta.name
        ));
    }
    // Velero names the volume it filled: one that is not the restored PVC's went into another
    // PVC of the same name (deleted and re-created since), which proves nothing for this one.
    if let (Some(filled), Some(bound)) = (dd.target_pv.as_deref(), restored_pv)
        && !filled.is_empty()
        && filled != bound
    {
        return CopyProof::NotProven(format!(
            "the DataDownload {} filled PV {filled}, but the restored {base} is bound to {bound}: it went into another PVC",
            dd.meta.name
        ));
    }
    if !dd.is_completed() {
        return CopyProof::NotProven(format!(
            "the DataDownload {} for {base} is {}, not Completed",
            dd.meta.name,
            dd.phase.display()
        ));
    }
    let bytes = super::disks::progress_of(dd);
    if let Some(p) = &bytes
        && p.done != p.total
    {
        return CopyProof::NotProven(format!(
            "the DataDownload {} for {base} is Completed with {} of {} bytes",
            dd.meta.name, p.done, p.total
        ));
    }
    CopyProof::Proven(RestoredCopy {
        restore_job: name.to_string(),
        restored_pvc: base.to_string(),
        download: dd.meta.name.to_string(),
        bytes: bytes.map(|p| p.total),
        completed: dd.completed_at,
    })
}
