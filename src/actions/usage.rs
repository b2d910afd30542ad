//! Who uses a volume right now: the running Pods that mount it through any claim bound to it.
//! A write that moves a disk or changes what happens to its volume is refused while one does.

use crate::analysis::ObjRef;
use crate::cluster::Snapshot;
use crate::model::Kind;
use crate::model::objects::Pv;

/// The claims through which a Pod can reach the PV: the names given, the PV's `claimRef` (in
/// this namespace) and every PVC of the namespace whose `volumeName` is the PV.
fn claims_of(
    snap: &Snapshot,
    ns: &str,
    pv_name: &str,
    pv: Option<&Pv>,
    extra: &[&str],
) -> Vec<String> {
    let mut claims: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    if let Some(c) = pv.and_then(|p| p.claim_ref.as_ref())
        && c.namespace == ns
    {
        claims.push(c.name.clone());
    }
    claims.extend(
        snap.pvcs
            .in_namespace(ns)
            .filter(|c| c.volume_name.as_deref() == Some(pv_name))
            .map(|c| c.meta.name.to_string()),
    );
    claims.sort();
    claims.dedup();
    claims
}

/// `pod (via claim)` for every Pod that is not finished and mounts the PV through a claim.
/// Every claim a running Pod mounts is added to the plan's reads, so that on fresh reads a
/// claim of another name bound to the same PV is seen too.
pub(super) fn pods_using(
    snap: &Snapshot,
    ns: &str,
    pv_name: &str,
    pv: Option<&Pv>,
    extra: &[&str],
    reads: &mut Vec<ObjRef>,
) -> Vec<String> {
    for pod in snap.pods.in_namespace(ns).filter(|p| !p.is_finished()) {
        for c in &pod.claims {
            reads.push(ObjRef::new(Kind::PersistentVolumeClaim, ns, c));
        }
    }
    let claims = claims_of(snap, ns, pv_name, pv, extra);
    let mut out = Vec::new();
    for pod in snap.pods.in_namespace(ns).filter(|p| !p.is_finished()) {
        if let Some(c) = pod.claims.iter().find(|c| claims.contains(c)) {
            out.push(format!("{} (via {c})", pod.meta.name));
        }
    }
    out
}
