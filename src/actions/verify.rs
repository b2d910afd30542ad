//! "Done" is proven: after the last write, the end state every confirmed write promised is
//! read fresh and checked. A write that re-planning skipped because its object vanished or
//! changed under the action leaves a state the success message would misdescribe: that is a
//! stop, said with what the cluster now holds. PURE: the caller reads the snapshot.

use super::ops::Op;
use crate::analysis::ObjRef;
use crate::cluster::Snapshot;
use crate::model::names::parse_orig_name;
use crate::model::objects::Pv;
use crate::model::{Kind, Obj};

/// What the end-state check reads: every object a confirmed write touched, and the PVC a
/// claimRef was pointed at.
pub(super) fn end_reads(ops: &[Op]) -> Vec<ObjRef> {
    let mut reads: Vec<ObjRef> = ops.iter().map(Op::target).collect();
    for op in ops {
        if let Op::SetClaimRef {
            namespace, name, ..
        } = op
        {
            reads.push(ObjRef::new(Kind::PersistentVolumeClaim, namespace, name));
        }
    }
    reads.sort();
    reads.dedup();
    reads
}

/// "PV pv-data is Released (Retain, data kept)": what happens to the volume now.
fn pv_state(pv: &Obj<Pv>) -> String {
    let policy = pv.reclaim_policy.display();
    let kept = if pv.reclaim_policy.as_deref() == Some("Retain") {
        ", data kept"
    } else {
        ""
    };
    format!(
        "PV {} is {} ({policy}{kept})",
        pv.meta.name,
        pv.phase.display()
    )
}

/// "-orig PVC ns/x" for a kept disk, "PVC ns/x" otherwise.
fn pvc_name(namespace: &str, name: &str) -> String {
    let kind = if parse_orig_name(name).is_some() {
        "-orig PVC"
    } else {
        "PVC"
    };
    format!("{kind} {namespace}/{name}")
}

/// Each promise of the confirmed writes that the fresh state breaks, in a line; empty when
/// every one holds.
pub(super) fn broken_promises(ops: &[Op], fresh: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    let pv = |name: &str| fresh.pvs.get("", name);
    for op in ops {
        let broken = match op {
            Op::AnnotatePv { pv: p, key, value } => match pv(p) {
                None => Some(format!("PV {p} vanished")),
                Some(v) if v.meta.annotation(key) != Some(value.as_str()) => Some(format!(
                    "PV {p} no longer records {key}={value} (it has {:?})",
                    v.meta.annotation(key).unwrap_or("nothing")
                )),
                Some(_) => None,
            },
            Op::SetReclaimPolicy { pv: p, to, .. } => match pv(p) {
                // Delete is the policy under which the provisioner removes the PV.
                None if to == "Delete" => None,
                None => Some(format!("PV {p} vanished")),
                Some(v) if v.reclaim_policy.as_deref() != Some(to.as_str()) => {
                    Some(format!("{}, not {to} as set", pv_state(v)))
                }
                Some(_) => None,
            },
            Op::CreateOrigPvc {
                namespace, name, ..
            }
            | Op::AnnotatePvc {
                namespace, name, ..
            } => {
                let gone = fresh
                    .pvcs
                    .get(namespace, name)
                    .is_none_or(|c| c.meta.deleted.is_some());
                // A claimRef pointed at it says the same with the PV's state: said there.
                let said_there = ops.iter().any(|o| {
                    matches!(o, Op::SetClaimRef { namespace: n, name: m, .. } if n == namespace && m == name)
                });
                (gone && !said_there).then(|| format!("{} was deleted", pvc_name(namespace, name)))
            }
            Op::DeletePvc {
                namespace,
                name,
                uid,
                ..
            } => fresh
                .pvcs
                .get(namespace, name)
                .filter(|c| &c.meta.uid == uid && c.meta.deleted.is_none())
                .map(|_| format!("PVC {namespace}/{name} still exists")),
            Op::SetClaimRef {
                pv: p,
                namespace,
                name,
                ..
            } => match (pv(p), fresh.pvcs.get(namespace, name)) {
                (None, _) => Some(format!("PV {p} vanished")),
                (Some(v), c) => match c.filter(|c| c.meta.deleted.is_none()) {
                    None => Some(format!(
                        "{} was deleted; {}",
                        pvc_name(namespace, name),
                        pv_state(v)
                    )),
                    Some(c) => {
                        let named = v.claim_ref.as_ref().is_some_and(|r| {
                            &r.namespace == namespace
                                && &r.name == name
                                && r.uid.as_deref() == Some(c.meta.uid.as_str())
                        });
                        (!named).then(|| {
                            format!(
                                "PV {p} is not bound to {namespace}/{name}: its claimRef names {}; {}",
                                v.claim_ref
                                    .as_ref()
                                    .map(|r| format!("{}/{}", r.namespace, r.name))
                                    .unwrap_or_else(|| "nothing".into()),
                                pv_state(v)
                            )
                        })
                    }
                },
            },
            Op::SetServerName {
                namespace,
                cluster,
                to,
                ..
            } => match fresh.clusters.get(namespace, cluster) {
                None => Some(format!("Cluster {namespace}/{cluster} vanished")),
                Some(c) if c.plugin_server_name.as_deref() != Some(to.as_str()) => Some(format!(
                    "Cluster {namespace}/{cluster} archives under {}, not {to}",
                    c.plugin_server_name.display()
                )),
                Some(_) => None,
            },
            Op::CreateRestoreJob {
                namespace, name, ..
            } => match fresh.restore_jobs.get(namespace, name) {
                None => Some(format!("RestoreJob {namespace}/{name} was deleted")),
                Some(r) if r.meta.deleted.is_some() => {
                    Some(format!("RestoreJob {namespace}/{name} is being deleted"))
                }
                Some(_) => None,
            },
            Op::ResumeRelease { namespace, name } => {
                match fresh.helm_releases.get(namespace, name) {
                    None => Some(format!("HelmRelease {namespace}/{name} vanished")),
                    Some(h) if h.is_suspended() == Some(true) => {
                        Some(format!("HelmRelease {namespace}/{name} is suspended again"))
                    }
                    Some(_) => None,
                }
            }
        };
        if let Some(b) = broken
            && !out.contains(&b)
        {
            out.push(b);
        }
    }
    out
}
