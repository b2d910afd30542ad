//! The last check before any PVC delete, made straight against the API whatever a plan says.

use super::fresh::api_for;
use super::write::WriteError;
use crate::analysis::ObjRef;
use crate::model::Kind;
use serde_json::Value;

/// The last word before a PVC is deleted, read straight from the API whatever the plan said:
/// the original of a rename goes only while its PV is `Retain` and still claimed by exactly
/// this UID; an `-orig` PVC never goes while its PV would be left `Retain` with `Delete`
/// recorded (the volume would leak).
pub(super) async fn delete_guard(
    client: &kube::Client,
    pvc: &ObjRef,
    uid: &str,
    reason: super::ops::DeleteReason,
) -> Result<(), WriteError> {
    use super::ops::DeleteReason;
    let read = |e: kube::Error| {
        WriteError::Other(format!("guard read failed: {}", super::write::brief(&e)))
    };
    let Some(claim) = api_for(client, pvc)
        .get_opt(&pvc.name)
        .await
        .map_err(read)?
    else {
        return Err(WriteError::Conflict(format!("{pvc} is already gone")));
    };
    let volume = claim
        .data
        .pointer("/spec/volumeName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let pv_ref = ObjRef::new(Kind::PersistentVolume, "", &volume);
    let pv = if volume.is_empty() {
        None
    } else {
        api_for(client, &pv_ref)
            .get_opt(&volume)
            .await
            .map_err(read)?
    };
    let policy = pv
        .as_ref()
        .and_then(|p| p.data.pointer("/spec/persistentVolumeReclaimPolicy"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let claim_uid = pv
        .as_ref()
        .and_then(|p| p.data.pointer("/spec/claimRef/uid"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let claim_name = pv
        .as_ref()
        .and_then(|p| p.data.pointer("/spec/claimRef/name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    match reason {
        DeleteReason::RenameOriginal => {
            if pv.is_none() || policy != "Retain" || claim_uid != uid {
                return Err(WriteError::Other(format!(
                    "refusing to delete {pvc}: its PV {volume} must be Retain and claimed by UID {uid} (it is {policy:?}, claimed by {claim_uid:?})"
                )));
            }
        }
        DeleteReason::ReclaimOrig => {
            let ann = crate::model::names::ANN_ORIGINAL_RECLAIM_POLICY;
            let recorded = claim
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(ann).cloned())
                .or_else(|| {
                    pv.as_ref()
                        .and_then(|p| p.metadata.annotations.as_ref())
                        .and_then(|a| a.get(ann).cloned())
                });
            if pv.is_some()
                && claim_name == pvc.name
                && policy == "Retain"
                && recorded.as_deref() == Some("Delete")
            {
                return Err(WriteError::Other(format!(
                    "refusing to delete {pvc}: PV {volume} is still Retain while its recorded policy is Delete; the volume would leak"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::ops::DeleteReason;
    use crate::sim::{Sim, SimConfig};
    use serde_json::json;

    /// Whatever a plan says, the guard reads the PV itself before a PVC is deleted.
    #[tokio::test]
    async fn the_delete_guard_refuses_a_leak_and_an_unprotected_original() {
        let sim = Sim::start(SimConfig::default()).await.expect("emulator");
        for o in [
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "d-orig-de3e", "namespace": "n", "uid": "u-orig",
                             "annotations": {"backups.cozystack.io/original-reclaim-policy": "Delete"}},
                "spec": {"volumeName": "pv-1"}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
                "spec": {"persistentVolumeReclaimPolicy": "Retain", "claimRef": {"namespace": "n", "name": "d-orig-de3e", "uid": "u-orig"}}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "d", "namespace": "n", "uid": "u-d"}, "spec": {"volumeName": "pv-2"}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-2"},
                "spec": {"persistentVolumeReclaimPolicy": "Delete", "claimRef": {"namespace": "n", "name": "d", "uid": "u-d"}}}),
        ] {
            sim.store().load(o).expect("loads");
        }
        let client = sim.client().expect("client");
        let orig = ObjRef::new(Kind::PersistentVolumeClaim, "n", "d-orig-de3e");
        let leak = delete_guard(&client, &orig, "u-orig", DeleteReason::ReclaimOrig).await;
        assert!(matches!(leak, Err(WriteError::Other(m)) if m.contains("would leak")));
        let original = ObjRef::new(Kind::PersistentVolumeClaim, "n", "d");
        let unprotected =
            delete_guard(&client, &original, "u-d", DeleteReason::RenameOriginal).await;
        assert!(matches!(unprotected, Err(WriteError::Other(m)) if m.contains("must be Retain")));
        sim.store()
            .patch_object(
                Kind::PersistentVolume,
                "",
                "pv-2",
                crate::sim::PatchKind::Merge,
                &json!({"spec": {"persistentVolumeReclaimPolicy": "Retain"}}),
            )
            .expect("patch");
        assert!(
            delete_guard(&client, &original, "u-d", DeleteReason::RenameOriginal)
                .await
                .is_ok()
        );
        assert!(matches!(
            delete_guard(
                &client,
                &original,
                "another-uid",
                DeleteReason::RenameOriginal
            )
            .await,
            Err(WriteError::Other(_))
        ));
        sim.shutdown().await;
    }
}
