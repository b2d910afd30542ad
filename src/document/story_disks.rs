//! Each disk's chain (DataVolume -> PVC -> PV, and the `-orig` PVC -> its PV) and the Postgres
//! serverName comparison, as the story shows them, with whether each kept copy is proven.

use super::story::Line;
use crate::analysis::{DiskChain, Ownership, PgView, PvInfo, PvcInfo, RestoreView};
use crate::model::snapshot::Snapshot;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PvcStory {
    pub name: String,
    pub uid: String,
    pub phase: Option<String>,
    pub volume: Option<String>,
    pub deleting: bool,
    pub restore_job_uid: Option<String>,
    pub recorded_policy: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PvStory {
    pub name: String,
    pub phase: Option<String>,
    pub reclaim_policy: Option<String>,
    /// `namespace/name` and the UID the claimRef names.
    pub claim: Option<String>,
    pub claim_uid: Option<String>,
    pub recorded_policy: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiskStory {
    pub disk: String,
    pub data_volume: Option<String>,
    pub data_volume_phase: Option<String>,
    pub pvc: Option<PvcStory>,
    pub pv: Option<PvStory>,
    pub orig_name: String,
    pub orig: Option<PvcStory>,
    /// Whose the `-orig` PVC is: this RestoreJob's, another's, or unknown, and why.
    pub orig_ownership: Option<Line>,
    pub orig_pv: Option<PvStory>,
    pub download: Option<String>,
    pub download_phase: Option<String>,
    /// Whether the restored copy is proven: see [`copy_proof`].
    pub proven: bool,
    pub proof: Line,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PgStory {
    pub app: String,
    pub cluster: String,
    pub cluster_uid: Option<String>,
    pub new_server_name: Option<String>,
    pub plugin_server_name: Option<String>,
    pub recovery_server_name: Option<String>,
    /// The plugin's serverName is the app's newServerName (or no newServerName is asked for).
    pub server_name_matches: bool,
    pub object_store: String,
    pub object_store_owner_uid: Option<String>,
    pub archive_destination: Option<String>,
    pub recovery_destination: Option<String>,
}

fn pvc(p: &PvcInfo) -> PvcStory {
    PvcStory {
        name: p.name.clone(),
        uid: p.uid.clone(),
        phase: Some(p.phase.display()),
        volume: p.volume.clone(),
        deleting: p.deleting,
        restore_job_uid: p.restore_job_uid.clone(),
        recorded_policy: p.recorded_policy.clone(),
    }
}

fn pv(p: &PvInfo) -> PvStory {
    PvStory {
        name: p.name.clone(),
        phase: Some(p.phase.display()),
        reclaim_policy: Some(p.reclaim_policy.display()),
        claim: p.claim.as_ref().map(|(c, _)| c.clone()),
        claim_uid: p.claim.as_ref().and_then(|(_, u)| u.clone()),
        recorded_policy: p.recorded_policy.clone(),
    }
}

fn ownership(o: &Ownership) -> Line {
    match o {
        Ownership::Ours { annotated: true } => Line::ours("this RestoreJob's (restore-job-uid)"),
        Ownership::Ours { annotated: false } => {
            Line::ours("this RestoreJob's (no annotation; created after it)")
        }
        Ownership::Foreign { other_uid: Some(u) } => {
            Line::ours("another RestoreJob's (").val(u).say(")")
        }
        Ownership::Foreign { other_uid: None } => {
            Line::ours("another RestoreJob's (no annotation; created before this one)")
        }
        Ownership::Unknown => Line::ours("unknown (no annotation, no usable timestamps)"),
    }
}

/// The copy proof's verdict as a line: its names are values, and its reasons quote names and
/// phases, so they are written as cluster text, not as our own words (`describe` is plain).
fn proof_line(proof: &crate::analysis::copy_proof::CopyProof) -> Line {
    use crate::analysis::copy_proof::CopyProof;
    match proof {
        CopyProof::Proven(c) => {
            let mut l = Line::ours("restored copy proven: DataDownload ")
                .val(&c.download)
                .say(" Completed");
            if let Some(b) = c.bytes {
                l = l.say(format!(" ({})", crate::analysis::fmt_bytes(b)));
            }
            if let Some(t) = c.completed {
                l = l.say(format!(" at {}", t.strftime("%Y-%m-%d %H:%M UTC")));
            }
            l.say(" into ").val(&c.restored_pvc)
        }
        CopyProof::NotProven(m) | CopyProof::Unknown(m) => Line::ours("not proven: ").prose(m),
    }
}

pub fn disks(r: &RestoreView, snap: &Snapshot) -> Vec<DiskStory> {
    r.disks
        .iter()
        .map(|d| {
            let (proven, proof) = copy_proof(r, d, snap);
            DiskStory {
                disk: d.disk.clone(),
                data_volume: d.data_volume.as_ref().map(|v| v.name.clone()),
                data_volume_phase: d.data_volume.as_ref().map(|v| v.phase.display()),
                pvc: d.pvc.as_ref().map(pvc),
                pv: d.pv.as_ref().map(pv),
                orig_name: d.orig_name.clone(),
                orig: d.orig.as_ref().map(pvc),
                orig_ownership: d.orig_ownership.as_ref().map(ownership),
                orig_pv: d.orig_pv.as_ref().map(pv),
                download: d.download.as_ref().map(|x| x.name.clone()),
                download_phase: d.download.as_ref().map(|x| x.phase.display()),
                proven,
                proof,
            }
        })
        .collect()
}

/// THE place the story decides whether a disk's restored copy is proven. Where the disk was
/// kept as an `-orig` PVC, `analysis::copy_proof` decides, the same proof the `:orig` screen
/// and `reclaim-orig` use (FINDINGS.md "Proof rules"); without one there is nothing to
/// reclaim, and the analysed chain says whether the restore put the data back.
pub fn copy_proof(r: &RestoreView, d: &DiskChain, snap: &Snapshot) -> (bool, Line) {
    if let Some(orig) = snap.pvcs.get(&r.id.namespace, &d.orig_name) {
        let proof = crate::analysis::copy_proof::copy_proof(snap, orig);
        return (proof.is_proven(), proof_line(&proof));
    }
    chain_proof(r, d)
}

/// The chain's own evidence, for a disk with no `-orig` PVC.
fn chain_proof(r: &RestoreView, d: &DiskChain) -> (bool, Line) {
    let unproven = |why: &str| (false, Line::ours(format!("not proven: {why}")));
    if r.phase != "Succeeded" {
        return unproven("the RestoreJob has not succeeded");
    }
    let Some(p) = &d.pvc else {
        return unproven("the restored PVC is missing");
    };
    if p.phase.as_deref() != Some("Bound") {
        return unproven("the restored PVC is not Bound");
    }
    match (p.created, r.started_at.or(r.created)) {
        (Some(c), Some(s)) if c >= s => {}
        (Some(_), Some(_)) => {
            return unproven("the PVC is older than the restore: it was never replaced");
        }
        _ => return unproven("the PVC's or the restore's creation time is unknown"),
    }
    match &d.download {
        Some(x) if x.phase.as_deref() == Some("Completed") => (
            true,
            Line::ours("proven: DataDownload ")
                .val(&x.name)
                .say(" Completed into a PVC created by this restore"),
        ),
        Some(x) => (
            false,
            Line::ours("not proven: DataDownload ")
                .val(&x.name)
                .say(" is ")
                .val(x.phase.display()),
        ),
        None => unproven("no DataDownload of this restore targets the PVC"),
    }
}

pub fn postgres(p: &PgView) -> PgStory {
    let plugin = p.plugin_server_name.as_ref().map(|f| f.display());
    PgStory {
        app: p.app.clone(),
        cluster: p.cluster_name.clone(),
        cluster_uid: p.cluster_uid.clone(),
        server_name_matches: match (&p.new_server_name, &plugin) {
            (Some(n), Some(s)) => n == s,
            (Some(_), None) => false,
            (None, _) => true,
        },
        new_server_name: p.new_server_name.clone(),
        plugin_server_name: plugin,
        recovery_server_name: p.recovery_server_name.clone(),
        object_store: p.object_store.clone(),
        object_store_owner_uid: p.object_store_owner_uid.clone(),
        archive_destination: p.archive_destination.clone(),
        recovery_destination: p.recovery_destination.clone(),
    }
}
