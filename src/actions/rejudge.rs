//! The `-orig` PVC's copy proof, judged again straight before its DELETE and once more after it.
//! The proof stands on OTHER objects (the restored PVC, its RestoreJob, its DataDownload): no
//! precondition on the `-orig` PVC notices one of them going, so the executor's fresh read at
//! the top of its loop is too old by the time the DELETE is sent (300 ms of latency per request
//! made that a window of seconds). What is judged here is what the DELETE's UID and
//! resourceVersion preconditions then name; what can still happen between this read and the
//! DELETE (no precondition spans two objects) is caught by `proof_after`, which makes the
//! action a stop, never a "done".

use super::fresh::fresh_snapshot;
use super::ops::{DeleteReason, Op};
use super::plan::{ActionRequest, plan};
use crate::analysis::ObjRef;
use crate::analysis::copy_proof::copy_proof;
use crate::cluster::Snapshot;
use crate::model::Obj;
use crate::model::objects::Pvc;
use std::sync::Arc;

/// What was judged: the fresh snapshot the DELETE's preconditions come from, and the `-orig`
/// PVC as it stood (its proof is checked again after the DELETE, when it is gone).
pub(super) struct Judged {
    pub snapshot: Snapshot,
    pub orig: Arc<Obj<Pvc>>,
    /// The proof in a line, for the operator.
    pub proof: String,
}

/// The `-orig` delete whose copy proof must hold, judged fresh, before `op` is sent: the
/// delete itself, and the reclaim's PV policy patch away from `Retain` that leaves the volume
/// to that delete (sent on an older read, it could leave the only copy on a `Delete` PV).
pub(super) fn judged_as<'a>(op: &'a Op, req: &ActionRequest, ops: &'a [Op]) -> Option<&'a Op> {
    if req.discard_only_copy {
        return None;
    }
    let is_reclaim_delete = |o: &Op| {
        matches!(
            o,
            Op::DeletePvc {
                reason: DeleteReason::ReclaimOrig,
                ..
            }
        )
    };
    match op {
        o if is_reclaim_delete(o) => Some(o),
        Op::SetReclaimPolicy { to, .. } if to != "Retain" => {
            ops.iter().find(|o| is_reclaim_delete(o))
        }
        _ => None,
    }
}

/// Reads everything the plan reads again, now, and judges again: the delete goes ahead only if
/// the copy is still proven and the fresh plan still makes it, for the same UID. `Err` is the reason to
/// stop, nothing having been deleted.
pub(super) async fn rejudge(
    client: &kube::Client,
    req: &ActionRequest,
    reads: &[ObjRef],
    namespaces: &[String],
    op: &Op,
) -> Result<Judged, String> {
    let Op::DeletePvc {
        namespace,
        name,
        uid,
        ..
    } = op
    else {
        return Err(format!("{} is not a PVC delete", op.describe()));
    };
    let snapshot = fresh_snapshot(client, reads, namespaces)
        .await
        .map_err(|e| format!("the copy proof could not be read again before the delete: {e:#}; {name} was not deleted"))?;
    let Some(orig) = snapshot
        .pvcs
        .get(namespace, name)
        .filter(|c| &c.meta.uid == uid && c.meta.deleted.is_none())
        .cloned()
    else {
        return Err(format!(
            "{namespace}/{name} was deleted or replaced since it was judged; nothing was deleted"
        ));
    };
    let proof = copy_proof(&snapshot, &orig);
    if let Some(missing) = proof.missing() {
        return Err(format!(
            "the restored copy is no longer proven on a fresh read just before the delete ({missing}); {name} was not deleted"
        ));
    }
    match plan(&snapshot, req) {
        Err(r) => {
            return Err(format!(
                "refused on a fresh read just before the delete: {}; {name} was not deleted",
                r.reason
            ));
        }
        Ok(p) if !p.ops.iter().any(|o| o.same_step(op)) => {
            return Err(format!(
                "the cluster changed just before the delete (the plan no longer deletes {name}); nothing was deleted"
            ));
        }
        Ok(_) => {}
    }
    Ok(Judged {
        proof: proof.describe(),
        snapshot,
        orig,
    })
}

/// After the DELETE: the proof read fresh again. The `-orig` PVC is gone by then, so it is
/// judged as it stood when the delete was decided. `Some(reason)` when the proof fell.
pub(super) async fn proof_after(
    client: &kube::Client,
    judged: &Obj<Pvc>,
    reads: &[ObjRef],
    namespaces: &[String],
) -> Option<String> {
    let what = format!("{}/{}", judged.meta.namespace, judged.meta.name);
    match fresh_snapshot(client, reads, namespaces).await {
        Err(e) => Some(format!(
            "-orig PVC {what} was deleted, but its restored copy could not be read back to prove it still holds: {e:#}"
        )),
        Ok(snap) => copy_proof(&snap, judged).missing().map(|m| {
            format!(
                "-orig PVC {what} was deleted, and on a fresh read after the delete its restored copy is no longer proven: {m}"
            )
        }),
    }
}
