//! Which backup controller the cluster runs, told from evidence only: whether it has the fixes
//! of report 000 (a foreign `-orig` name fails the RestoreJob; `-orig` PVCs carry the
//! RestoreJob's UID; the PV's policy is recorded) changes what a state means. No evidence, or
//! evidence both ways with the old kind newest, is `unknown`, never a guess.

use crate::model::history::ManagedEntry;
use crate::model::names::{
    ANN_ORIGINAL_RECLAIM_POLICY, ANN_RESTORE_JOB_UID, parse_orig_name, short_hash,
};
use crate::model::objects::RjPhase;
use crate::model::snapshot::{ORIG_TERM, Snapshot};
use jiff::Timestamp;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Generation {
    /// Has the fixes: refuses a foreign `-orig` name, annotates, records the policy.
    Guarded,
    /// Before the fixes: a taken `-orig` name is silently skipped.
    Unguarded,
    #[default]
    Unknown,
}

impl Generation {
    pub fn as_str(self) -> &'static str {
        match self {
            Generation::Guarded => "guarded",
            Generation::Unguarded => "unguarded",
            Generation::Unknown => "unknown",
        }
    }
}

/// One fact pointing at a generation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub says: Generation,
    pub what: String,
    /// When the fact came about (a creation, a failure); `None` for "now" (the running image).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Timestamp>,
}

impl Evidence {
    /// A fact about the controller as it runs now (no time of its own).
    pub fn now(says: Generation, what: impl Into<String>) -> Evidence {
        Evidence {
            says,
            what: what.into(),
            at: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ControllerGeneration {
    pub generation: Generation,
    pub evidence: Vec<Evidence>,
}

/// The last release known to run the controller before the fixes (report 000's lab ran it with
/// the bug). Which release first carries them is not recorded, so a newer tag proves nothing.
const LAST_UNGUARDED: (u64, u64, u64) = (1, 6, 3);

/// The field managers the backup controller writes as: `backupstrategy-controller` is the real
/// one (its binary's name, recorded on a real API server for every write of the restore path:
/// the real-controller dumps); `backup-controller` is Cozystack's other controller binary, kept
/// because a build that runs the restore logic in it writes under that name. Only their writes
/// are evidence: a person's (`kubectl-*`), restorewatch's own repairs (`restorewatch`, or
/// `unknown` from a version that sent no field manager), the PV controller's or any other
/// writer's say nothing about which controller runs.
pub const CONTROLLER_MANAGERS: &[&str] = &["backupstrategy-controller", "backup-controller"];

fn is_controller(manager: &str) -> bool {
    CONTROLLER_MANAGERS.contains(&manager)
}

/// The backup controller's manager, when it wrote a field under `prefix`.
fn written_by_controller(managed: &[ManagedEntry], prefix: &str) -> Option<String> {
    managed
        .iter()
        .filter(|m| m.fields.iter().any(|f| f.starts_with(prefix)))
        .map(|m| m.manager.to_string())
        .find(|m| is_controller(m))
}

/// The backup controller's manager, when it wrote annotation `key` of an object.
fn annotated_by_controller(meta: &crate::model::Meta, key: &str) -> Option<String> {
    meta.annotation_writer(key)
        .filter(|m| is_controller(m))
        .map(str::to_string)
}

/// The evidence the objects give.
pub fn evidence(snap: &Snapshot) -> Vec<Evidence> {
    let mut out = Vec::new();
    for pvc in snap.pvcs.by_term(ORIG_TERM) {
        let Some((_, hash)) = parse_orig_name(&pvc.meta.name) else {
            continue;
        };
        let name = format!("{}/{}", pvc.meta.namespace, pvc.meta.name);
        // restorewatch's own rename writes the same annotation: only a controller's write counts.
        let annotated_by = pvc
            .meta
            .annotation(ANN_RESTORE_JOB_UID)
            .map(|_| pvc.meta.annotation_writer(ANN_RESTORE_JOB_UID));
        if let Some(m) = annotated_by_controller(&pvc.meta, ANN_RESTORE_JOB_UID) {
            out.push(Evidence {
                says: Generation::Guarded,
                what: format!("-orig PVC {name} carries restore-job-uid (written by {m})"),
                at: pvc.meta.created,
            });
            continue;
        }
        let added_since = match annotated_by {
            None => String::new(),
            // Added by someone else (a repair): the controller that made the PVC wrote none.
            Some(Some(m)) => format!(" of its own (added since by {m})"),
            // Who wrote it is not recorded: nothing to tell.
            Some(None) => continue,
        };
        // No annotation of the controller's: the controller that made it did not write one, if
        // a RestoreJob of the matching hash existed when it was made and the controller (not a
        // person, not a repair) created it.
        let made_for = snap
            .restore_jobs
            .in_namespace(&pvc.meta.namespace)
            .filter(|rj| short_hash(&rj.meta.name) == hash)
            .find(|rj| matches!((rj.meta.created, pvc.meta.created), (Some(r), Some(p)) if r <= p));
        if let (Some(rj), Some(m)) = (made_for, written_by_controller(&pvc.meta.managed, "spec")) {
            out.push(Evidence {
                says: Generation::Unguarded,
                what: format!(
                    "-orig PVC {name}, made by {m} for RestoreJob {}, has no restore-job-uid{added_since}",
                    rj.meta.name
                ),
                at: pvc.meta.created,
            });
        }
    }
    for pv in snap.pvs.by_term(ORIG_TERM) {
        if pv.meta.annotation(ANN_ORIGINAL_RECLAIM_POLICY).is_none() {
            continue;
        }
        if let Some(m) = annotated_by_controller(&pv.meta, ANN_ORIGINAL_RECLAIM_POLICY) {
            let at = pv
                .meta
                .managed
                .iter()
                .filter(|e| *e.manager == *m)
                .filter_map(|e| e.time)
                .max();
            out.push(Evidence {
                says: Generation::Guarded,
                what: format!(
                    "PV {} carries original-reclaim-policy (written by {m})",
                    pv.meta.name
                ),
                at,
            });
        }
    }
    for rj in snap.restore_jobs.iter() {
        if rj.phase != RjPhase::Failed {
            continue;
        }
        let Some(msg) = rj.message.as_deref() else {
            continue;
        };
        let named = msg
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
            .find(|w| parse_orig_name(w.trim_matches('.')).is_some());
        if let Some(pvc) = named {
            out.push(Evidence {
                says: Generation::Guarded,
                what: format!(
                    "RestoreJob {}/{} failed naming -orig PVC {} (only the fixed controller refuses a taken name)",
                    rj.meta.namespace,
                    rj.meta.name,
                    pvc.trim_matches('.')
                ),
                at: rj.completed_at.known().copied().or(rj.meta.created),
            });
        }
    }
    out
}

/// What the backup controller's image tag says: only a release up to the last one known
/// without the fixes is evidence (unguarded); a newer or unparsable tag says nothing.
pub fn image_evidence(image: &str) -> Option<Evidence> {
    // `registry:5000/name:tag@sha256:...`: the tag is after the last `:` of the last path part.
    let reference = image.split('@').next().unwrap_or(image);
    let last = reference.rsplit('/').next().unwrap_or(reference);
    let tag = last.rsplit_once(':').map(|(_, t)| t)?;
    let mut parts = tag.trim_start_matches('v').splitn(3, '.');
    let mut num = || -> Option<u64> {
        let p = parts.next()?;
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        // A pre-release or build suffix (`1.6.3-rc1`) is not the release: no evidence.
        (digits.len() == p.len()).then(|| digits.parse().ok())?
    };
    let version = (num()?, num()?, num()?);
    (version <= LAST_UNGUARDED).then(|| {
        Evidence::now(
            Generation::Unguarded,
            // Short: the header shows it whole where it fits.
            format!(
                "image {image}: v{}.{}.{}, before the fixes",
                version.0, version.1, version.2
            ),
        )
    })
}

/// The verdict: the newest evidence decides (an upgrade turns an old cluster guarded); a
/// running image counts as now. Old-controller evidence newer than fixed-controller evidence
/// (a downgrade, or a copy made by hand) leaves it unknown.
pub fn judge(mut evidence: Vec<Evidence>) -> ControllerGeneration {
    evidence.sort_by(|a, b| {
        let key = |e: &Evidence| (e.at.is_none(), e.at);
        key(b).cmp(&key(a)).then_with(|| a.what.cmp(&b.what))
    });
    evidence.dedup();
    let newest = |g: Generation| {
        evidence
            .iter()
            .find(|e| e.says == g)
            .map(|e| (e.at.is_none(), e.at))
    };
    let generation = match (newest(Generation::Guarded), newest(Generation::Unguarded)) {
        (None, None) => Generation::Unknown,
        (Some(_), None) => Generation::Guarded,
        (None, Some(_)) => Generation::Unguarded,
        (Some(g), Some(u)) if g > u => Generation::Guarded,
        // The running image is the controller now, whatever older objects say.
        (Some(_), Some((true, _))) => Generation::Unguarded,
        (Some(_), Some(_)) => Generation::Unknown,
    };
    ControllerGeneration {
        generation,
        evidence,
    }
}

/// The generation the objects of a snapshot show, with its controller's image when read. The
/// one judgement of a snapshot: check, preflight, the report, the header and the metrics all
/// take it from here (through the report, or `Snapshot::controller_generation`).
pub fn of_snapshot(snap: &Snapshot) -> ControllerGeneration {
    let mut ev = evidence(snap);
    // A scoped view's evidence from the other namespaces (`judge` drops what is there twice).
    if let Some(beyond) = &snap.beyond_scope {
        ev.extend(evidence(beyond));
    }
    match snap.controller_image.as_deref().and_then(image_evidence) {
        // The Plans controller's image only stands in when nothing else says anything.
        Some(mut e) if snap.controller_image_fallback && ev.is_empty() => {
            e.what = format!(
                "{} (Deployment backup-controller: no backupstrategy-controller found)",
                e.what
            );
            ev.push(e);
        }
        Some(_) if snap.controller_image_fallback => {}
        Some(e) => ev.push(e),
        None => {}
    }
    judge(ev)
}

impl ControllerGeneration {
    /// `guarded (evidence: …)`, `unguarded (…)`, `unknown`: one line for headers.
    pub fn summary(&self) -> String {
        match self.evidence.iter().find(|e| e.says == self.generation) {
            Some(e) if self.generation != Generation::Unknown => {
                let more = self.evidence.len() - 1;
                let more = if more > 0 {
                    format!(" +{more} more")
                } else {
                    String::new()
                };
                format!("{} (evidence: {}{more})", self.generation.as_str(), e.what)
            }
            _ if self.evidence.is_empty() => "unknown (no evidence yet)".into(),
            _ => "unknown (conflicting evidence)".into(),
        }
    }
}

// ---- what a state leads to, per generation ------------------------------------------------
// controller-facts.md: before the fix a taken `-orig` name is "success" and any other failure to
// keep a disk is a Warning event, after which the DataVolume is deleted anyway; after it, every
// `-orig` name is checked before anything is suspended (a taken one fails the RestoreJob, naming
// the PVC) and other errors are retried, never deleting the DataVolume. Unknown says both.

/// What an `-orig` name held by another RestoreJob's PVC leads to, for a restore still to keep
/// its disks.
pub fn foreign_orig_consequence(g: Generation) -> &'static str {
    match g {
        Generation::Guarded => {
            "the controller (guarded) fails the RestoreJob before it suspends or halts anything, naming this PVC: nothing is lost, and the restore does not run"
        }
        Generation::Unguarded => {
            "the controller (unguarded) skips keeping this disk without a word and replaces it: the current disk is lost, and the restore can still report Succeeded"
        }
        Generation::Unknown => {
            "a guarded controller fails the RestoreJob before it halts anything; an unguarded one (not ruled out: the generation is unknown) skips keeping the disk without a word, and the current disk is lost"
        }
    }
}

/// What a disk that was not kept says about how it was lost.
pub fn not_kept_consequence(g: Generation) -> &'static str {
    match g {
        Generation::Guarded => {
            "the controller (guarded) does not drop a disk it cannot keep (a taken -orig name fails the RestoreJob, other errors are retried): check whether this restore ran before the controller was upgraded, or whether the -orig PVC was removed since"
        }
        Generation::Unguarded => {
            "the controller (unguarded) drops a disk it cannot keep with at most a Warning event and deletes its DataVolume anyway: the loss is silent, and the restore can still report Succeeded"
        }
        Generation::Unknown => {
            "an unguarded controller drops a disk it cannot keep with at most a Warning event; a guarded one fails or retries instead (which one runs is unknown)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(says: Generation, at: Option<&str>) -> Evidence {
        Evidence {
            says,
            what: format!("{says:?}"),
            at: at.map(|t| t.parse().expect("time")),
        }
    }

    #[test]
    fn image_tags_up_to_the_last_unguarded_release_are_evidence() {
        assert!(image_evidence("ghcr.io/cozystack/backup-controller:v1.6.3").is_some());
        assert!(image_evidence("ghcr.io/cozystack/backup-controller:v1.5.0@sha256:ab").is_some());
        assert!(image_evidence("registry:5000/backup-controller:v1.6.4").is_none());
        assert!(image_evidence("ghcr.io/cozystack/backup-controller:latest").is_none());
        assert!(image_evidence("ghcr.io/cozystack/backup-controller:v1.6.3-rc1").is_none());
        assert!(image_evidence("backup-controller").is_none());
    }

    #[test]
    fn the_newest_evidence_decides_and_a_downgrade_is_unknown() {
        let g = Generation::Guarded;
        let u = Generation::Unguarded;
        assert_eq!(judge(vec![]).generation, Generation::Unknown);
        let upgraded = judge(vec![
            ev(u, Some("2026-01-01T00:00:00Z")),
            ev(g, Some("2026-06-01T00:00:00Z")),
        ]);
        assert_eq!(upgraded.generation, g);
        let odd = judge(vec![
            ev(g, Some("2026-01-01T00:00:00Z")),
            ev(u, Some("2026-06-01T00:00:00Z")),
        ]);
        assert_eq!(odd.generation, Generation::Unknown);
        let image = judge(vec![ev(g, Some("2026-06-01T00:00:00Z")), ev(u, None)]);
        assert_eq!(image.generation, u);
    }
}
