//! Every `-orig` PVC in the cluster, whose it is, and whether deleting it now would lose a volume.

use super::codes::{Code, Severity};
use super::copy_proof::{copy_proof, what_proves};
use super::disks::kind_observed;
use super::disks::{pv_info, pv_of, pvc_info};
use super::emit::Findings;
use super::reclaim_policy::{OriginalPolicy, original_policy};
use super::report::{DeletedRestore, ObjRef, OrigPvcView, RestoreId};
use crate::model::names::{parse_orig_name, short_hash};
use crate::model::objects::{Pv, Pvc};
use crate::model::ownership::{OrigOwner, orig_owner};
use crate::model::snapshot::ORIG_TERM;
use crate::model::snapshot::Snapshot;
use crate::model::{Kind, Obj};
use std::sync::Arc;

/// The RestoreJob that made an `-orig` PVC (see `model::ownership::orig_owner`); `Deleted`
/// only when RestoreJobs were read at all.
fn owner_of<'a>(snap: &'a Snapshot, pvc: &Obj<Pvc>) -> OrigOwner<'a> {
    match orig_owner(pvc, snap.restore_jobs.in_namespace(&pvc.meta.namespace)) {
        OrigOwner::Deleted { .. } if !kind_observed(snap, Kind::RestoreJob) => OrigOwner::Unknown,
        o => o,
    }
}

/// Running Pods that use an `-orig` PVC's volume: through the PVC itself, or through any claim
/// bound to its PV (the original PVC of a half-done rename still claims it, and the VM runs on
/// it). "pod (via claim)" when through another claim.
fn pods_using(snap: &Snapshot, pvc: &Obj<Pvc>, pv: Option<&Obj<Pv>>) -> Vec<String> {
    let ns = pvc.meta.namespace.as_str();
    let pv_name = pv.map(|p| p.meta.name.as_str());
    let on_pv = |claim: &str| {
        pv_name.is_some_and(|v| {
            snap.pvcs
                .get(ns, claim)
                .is_some_and(|c| c.volume_name.as_deref() == Some(v))
        }) || pv
            .and_then(|p| p.claim_ref.as_ref())
            .is_some_and(|c| c.namespace == ns && c.name == claim)
    };
    snap.pods
        .in_namespace(ns)
        .filter(|p| !p.is_finished())
        .filter_map(|p| {
            if p.claims.iter().any(|c| c == &pvc.meta.name) {
                return Some(p.meta.name.to_string());
            }
            p.claims
                .iter()
                .find(|c| on_pv(c))
                .map(|c| format!("{} (via {c})", p.meta.name))
        })
        .collect()
}

/// The `-orig` PVCs of namespace `ns`, and the leaks of `-orig` PVCs of `ns` already gone.
pub fn inventory_in(
    snap: &Snapshot,
    ns: &str,
    out: &mut Findings,
) -> Vec<std::sync::Arc<OrigPvcView>> {
    let mut views = Vec::new();
    // Only PVCs named like `-orig` ones can pass the first test: the index has them, in the
    // same order as a scan of every PVC.
    for pvc in snap.pvcs.by_term_in(ORIG_TERM, ns) {
        let Some((base, hash)) = parse_orig_name(&pvc.meta.name) else {
            continue;
        };
        let ns = pvc.meta.namespace.as_str();
        let pv = pv_of(snap, pvc);
        let owner = owner_of(snap, pvc);
        let rj = match &owner {
            OrigOwner::Restore { rj, .. } => Some(*rj),
            OrigOwner::Deleted { .. } => None,
            // Cannot tell: the newest RestoreJob of the hash is presumed its maker (the safe
            // side: its restore may still need the PVC), as reclaim-orig presumes.
            OrigOwner::Unknown => snap
                .restore_jobs
                .in_namespace(ns)
                .filter(|r| short_hash(&r.meta.name) == hash)
                .max_by_key(|r| r.meta.created),
        };
        let deleted_restore = match &owner {
            OrigOwner::Deleted { uid } => Some(DeletedRestore { uid: uid.clone() }),
            _ => None,
        };
        let restore_id = rj.map(|r| RestoreId {
            namespace: ns.to_string(),
            name: r.meta.name.to_string(),
        });
        let class_obj = pv
            .and_then(|p| p.storage_class.clone())
            .or_else(|| pvc.storage_class.clone())
            .and_then(|c| snap.storage_classes.get("", &c));
        let class = class_obj.and_then(|sc| sc.effective_reclaim_policy().map(str::to_string));
        let mounted_by = pods_using(snap, pvc, pv.map(|p| &**p));
        let policy = pv.map(|p| original_policy(p, Some(pvc), class_obj.map(|c| &***c)));
        let rec = policy.as_ref().and_then(|p| p.value().map(str::to_string));
        let pv_policy = pv.and_then(|p| p.reclaim_policy.known().cloned());
        let proof = copy_proof(snap, pvc);
        let only = proof.missing().map(str::to_string);
        let deleting = pvc.meta.deleted.is_some();
        let reclaim = if let Some(r) = rj.filter(|r| !r.phase.is_terminal()) {
            Err(format!(
                "RestoreJob {} is {}",
                r.meta.name,
                if r.phase.as_str().is_empty() {
                    "new"
                } else {
                    r.phase.as_str()
                }
            ))
        } else if !mounted_by.is_empty() {
            Err(format!("mounted by pod {}", mounted_by.join(", ")))
        } else if deleting {
            Err("already being deleted".to_string())
        } else if let Some(why) = &only {
            Err(format!("keep it: it may be the only copy ({why})"))
        } else if pv_policy.as_deref() == Some("Retain") {
            Ok(rec.clone())
        } else {
            Ok(None)
        };
        if pv_policy.as_deref() == Some("Retain")
            && let Some(pv) = pv
        {
            let state = ReclaimState {
                base: base.to_string(),
                running: rj
                    .filter(|r| !r.phase.is_terminal())
                    .map(|r| r.meta.name.to_string()),
                mounted_by: mounted_by.clone(),
                only_copy: only.clone(),
                deleting,
            };
            leak_findings(
                snap,
                out,
                pvc,
                pv,
                policy.as_ref(),
                restore_id.as_ref(),
                &state,
            );
        }
        views.push(std::sync::Arc::new(OrigPvcView {
            namespace: ns.to_string(),
            pvc: pvc_info(pvc),
            base: base.to_string(),
            hash: hash.to_string(),
            size: pvc.size().map(str::to_string),
            restore: restore_id,
            restore_phase: rj.map(|r| r.phase.as_str().to_string()),
            deleted_restore,
            pv: pv.map(|p| pv_info(p)),
            class_policy: class,
            mounted_by,
            reclaim,
            proof,
        }));
    }
    released_leaks(snap, ns, out);
    views
}

/// The namespaces `inventory_in` has anything to say about.
pub fn namespaces(snap: &Snapshot) -> std::collections::BTreeSet<String> {
    let mut out: std::collections::BTreeSet<String> = snap
        .pvcs
        .by_term(ORIG_TERM)
        .iter()
        .map(|p| p.meta.namespace.to_string())
        .collect();
    out.extend(
        snap.pvs
            .by_term(ORIG_TERM)
            .iter()
            .filter_map(|pv| pv.claim_ref.as_ref().map(|c| c.namespace.clone())),
    );
    out
}

/// What decides whether reclaim-orig may be offered on an `-orig` PVC, and what its remedy says.
struct ReclaimState {
    /// The disk the PVC keeps.
    base: String,
    /// The RestoreJob that made it still runs: the PVC is its safety copy.
    running: Option<String>,
    mounted_by: Vec<String>,
    /// Why its disk is not proven restored (see `copy_proof`): it may be the only copy.
    only_copy: Option<String>,
    deleting: bool,
}

impl ReclaimState {
    /// The remedy and whether reclaim-orig fits: never offered where it would refuse.
    fn remedy(&self, pv: &str, then: String) -> (String, bool) {
        let set_back = format!(
            "set PV {pv} back to its original policy before the PVC goes, or the volume leaks"
        );
        if let Some(r) = &self.running {
            (
                format!(
                    "Keep it while RestoreJob {r} runs: it is the restore's safety copy. Once the restore has finished and the disk is checked: {then}"
                ),
                false,
            )
        } else if !self.mounted_by.is_empty() {
            (
                format!(
                    "It is mounted by pod {}: keep it while it is in use. Afterwards: {then}",
                    self.mounted_by.join(", ")
                ),
                false,
            )
        } else if let Some(why) = &self.only_copy {
            (
                format!(
                    "Keep it: it may be the only copy ({why}). What would prove the restore: {}. When its data is safe elsewhere, {set_back}",
                    what_proves(&self.base)
                ),
                false,
            )
        } else if self.deleting {
            (format!("It is being deleted: {then}"), true)
        } else {
            (then, true)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn leak_findings(
    snap: &Snapshot,
    out: &mut Findings,
    pvc: &Obj<Pvc>,
    pv: &Arc<Obj<Pv>>,
    policy: Option<&OriginalPolicy>,
    restore: Option<&RestoreId>,
    state: &ReclaimState,
) {
    let Some(policy) = policy else { return };
    let deleting = state.deleting;
    let ns = &pvc.meta.namespace;
    let objects = vec![
        ObjRef::new(Kind::PersistentVolumeClaim, ns, &pvc.meta.name),
        ObjRef::new(Kind::PersistentVolume, "", &pv.meta.name),
    ];
    // While the -orig PVC simply sits there, the leak is a risk to know of (info); once its
    // deletion is under way it is about to happen (warning).
    let sev = if deleting {
        Severity::Warning
    } else {
        Severity::Info
    };
    let now_note = if deleting {
        " It is being deleted NOW."
    } else {
        ""
    };
    match policy.value() {
        Some(rec @ ("Delete" | "Recycle")) => {
            let (remedy, offer) = state.remedy(
                &pv.meta.name,
                format!("use the reclaim-orig action: it sets PV {} back to {rec}, then deletes the PVC", pv.meta.name),
            );
            let f = out.push_with(
                snap,
                Code::ReclaimLeakRisk,
                sev,
                restore,
                objects,
                format!(
                    "PV {} of {} is Retain (set by the rename) and its recorded original policy is {rec}: deleting the PVC alone leaves the volume behind.{now_note}",
                    pv.meta.name, pvc.meta.name
                ),
                remedy,
            );
            if !offer {
                f.action = None;
            }
        }
        Some(_) => {}
        None => {
            let likely = policy
                .class_policy
                .as_ref()
                .map(|c| format!("; its StorageClass says {c}"))
                .unwrap_or_default();
            let recorded = if policy.invalid.is_empty() {
                "no original-reclaim-policy was recorded (controller before the fix)".to_string()
            } else {
                format!("its record is invalid ({})", policy.invalid.join("; "))
            };
            let (remedy, offer) = state.remedy(
                &pv.meta.name,
                "use the reclaim-orig action and pick the policy (the StorageClass's is the likely one); deleting the PVC alone keeps the volume".into(),
            );
            let f = out.push_with(
                snap,
                Code::ReclaimPolicyUnrecorded,
                sev,
                restore,
                objects,
                format!(
                    "PV {} of {} is Retain and {recorded}: its policy before the rename is unknown{likely}.{now_note}",
                    pv.meta.name, pvc.meta.name
                ),
                remedy,
            );
            if !offer {
                f.action = None;
            }
        }
    }
}

/// PVs still `Retain` whose `-orig` PVC is already gone: the leak happened.
fn released_leaks(snap: &Snapshot, ns: &str, out: &mut Findings) {
    // Only PVs whose claimRef names an `-orig` PVC of this namespace can leak here.
    for pv in snap
        .pvs
        .by_term(&crate::model::snapshot::orig_claim_term(ns))
    {
        let Some(c) = pv.claim_ref.as_ref().filter(|c| c.namespace == ns) else {
            continue;
        };
        if snap.scope.as_deref().is_some_and(|s| s != c.namespace) {
            continue;
        }
        if parse_orig_name(&c.name).is_none()
            || pv.reclaim_policy.as_deref() != Some("Retain")
            || snap
                .pvcs
                .get(&c.namespace, &c.name)
                .is_some_and(|p| c.uid.as_deref().is_none_or(|u| u == p.meta.uid))
        {
            continue;
        }
        if !super::disks::kind_observed(snap, Kind::PersistentVolumeClaim) {
            continue;
        }
        let class = pv
            .storage_class
            .as_deref()
            .and_then(|c| snap.storage_classes.get("", c));
        let policy = original_policy(pv, None, class.map(|c| &***c));
        let rec = policy.value();
        let code = match rec {
            Some("Delete" | "Recycle") => Code::ReclaimLeakRisk,
            Some(_) => continue,
            None => Code::ReclaimPolicyUnrecorded,
        };
        out.push_with(
            snap,
            code,
            Severity::Warning,
            None,
            // The gone PVC first: the -orig name the leak is known by.
            vec![ObjRef::new(Kind::PersistentVolumeClaim, &c.namespace, &c.name), ObjRef::new(Kind::PersistentVolume, "", &pv.meta.name)],
            format!(
                "PV {} ({}) still exists with policy Retain although its -orig PVC {}/{} is gone: the volume leaked{}",
                pv.meta.name,
                pv.phase.display(),
                c.namespace,
                c.name,
                rec.map(|r| format!(" (recorded original policy {r})")).unwrap_or_default()
            ),
            format!("If the data is no longer needed: kubectl patch pv {} -p '{{\"spec\":{{\"persistentVolumeReclaimPolicy\":\"Delete\"}}}}'", pv.meta.name),
        )
        // reclaim-orig acts on the PVC, which is gone: it would do nothing. The remedy is the
        // one write left to make.
        .action = None;
    }
}
