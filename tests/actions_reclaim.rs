//! reclaim-orig against the emulator: only its own PV, never under a Pod, never the only good
//! copy unless asked by name, and a stale `-orig` PVC left by a deleted RestoreJob of the same
//! name reclaimable. A refusal is checked through kubectl to have written nothing; an allowed
//! run by its end state.

mod actions_support;

use actions_support::*;
use restorewatch::actions::ActionRequest;
use restorewatch::actions::execute::Outcome;
use restorewatch::analysis::ActionKind;
use restorewatch::model::Kind;
use serde_json::{Value, json};

const ORIG_UID: &str = "0e000000-0000-4000-8000-000000000005";

fn reclaim() -> ActionRequest {
    pvc_req(ActionKind::ReclaimOrig, ORIG)
}

/// The operator's consent, by name, to discard what may be the only copy.
fn discard(req: ActionRequest) -> ActionRequest {
    ActionRequest {
        discard_only_copy: true,
        ..req
    }
}

/// A finished restore that kept its disk: the -orig PVC Bound to its Retain PV (recorded
/// Delete), the disk restored under its own name by a DataDownload in `download` phase.
fn finished_with(phase: &str, download: &str) -> Vec<Value> {
    let mut objs = base_objects(phase);
    objs.extend([
        restored_pvc(),
        pv("Retain", ORIG, ORIG_UID, Some("Delete")),
        orig_pvc(ORIG_UID, Some(RJ_UID), "Bound"),
    ]);
    objs.extend(restore_proof(download));
    objs
}

/// The same, its restore proven: the DataDownload of the restored disk Completed.
fn finished(phase: &str) -> Vec<Value> {
    finished_with(phase, "Completed")
}

async fn reclaimed(sim: &restorewatch::sim::SimHandle, client: &kube::Client, req: &ActionRequest) {
    let plan = plan_ok(client, req).await;
    let out = executor(client, None).execute(&plan, |_| {}).await;
    assert!(matches!(out, Outcome::Completed { .. }), "{out:?}");
    wait_gone(sim, NS, ORIG).await;
    let shown = kubectl(sim, &["get", "pvc", "-n", NS, "-o", "name"]).await;
    assert!(!shown.contains(ORIG), "{shown}");
}

#[tokio::test]
async fn reclaim_touches_only_its_own_pv() {
    // The PV's claimRef names the -orig name but another UID: an older PVC of that name.
    let mut objs = finished("Succeeded");
    objs[5] = pv(
        "Retain",
        ORIG,
        "0d000000-0000-4000-8000-00000000000f",
        Some("Delete"),
    );
    let (sim, client) = sim_with(objs).await;
    let why = refused_without_writes(&sim, &client, &reclaim()).await;
    assert!(why.contains("not its UID"), "{why}");
    sim.shutdown().await;

    // The PV is bound to another claim that a running Pod mounts.
    let mut objs = finished("Succeeded");
    objs[5] = pv(
        "Retain",
        "data-clone",
        "c1000000-0000-4000-8000-000000000021",
        Some("Delete"),
    );
    objs.push(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data-clone", "namespace": NS, "uid": "c1000000-0000-4000-8000-000000000021"},
        "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv-data"}, "status": {"phase": "Bound"}}));
    objs.push(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "reader", "namespace": NS},
        "spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data-clone"}}]},
        "status": {"phase": "Running"}}),
    );
    let (sim, client) = sim_with(objs).await;
    let why = refused_without_writes(&sim, &client, &reclaim()).await;
    assert!(why.contains("reader (via data-clone)"), "{why}");
    sim.shutdown().await;

    // Near miss: its own PV (name and UID): the policy goes back, then the PVC.
    let (sim, client) = sim_with(finished("Succeeded")).await;
    reclaimed(&sim, &client, &reclaim()).await;
    let shown = kubectl(
        &sim,
        &[
            "get",
            "pv",
            "pv-data",
            "-o",
            "jsonpath={.spec.persistentVolumeReclaimPolicy}",
        ],
    )
    .await;
    assert_eq!(shown, "Delete");
    sim.shutdown().await;
}

#[tokio::test]
async fn the_only_copy_is_kept_unless_the_operator_says_discard_by_name() {
    // The restore failed.
    let failed = finished("Failed");
    // The restored disk has no PVC.
    let mut missing = finished("Succeeded");
    missing.remove(4);
    // Its DataDownload failed.
    let download_failed = finished_with("Succeeded", "Failed");
    for (label, objs, says) in [
        (
            "failed restore",
            failed,
            "RestoreJob restore-test that made this copy is Failed",
        ),
        (
            "missing disk",
            missing,
            "the restored vm-disk-data does not exist",
        ),
        (
            "failed download",
            download_failed,
            "the DataDownload tenant-a.restore-test-fk8s8-8q8tz for vm-disk-data is Failed, not Completed",
        ),
    ] {
        let (sim, client) = sim_with(objs).await;
        let why = refused_without_writes(&sim, &client, &reclaim()).await;
        assert!(
            why.contains("may be the only copy")
                && why.contains(says)
                && why.contains("--discard-only-copy"),
            "{label}: {why}"
        );
        // Asked by name, it goes, the policy set back first.
        let req = ActionRequest {
            discard_only_copy: true,
            ..reclaim()
        };
        reclaimed(&sim, &client, &req).await;
        sim.shutdown().await;
    }

    // Near miss: a completed download of the restored disk proves the copy.
    let (sim, client) = sim_with(finished("Succeeded")).await;
    let plan = plan_ok(&client, &reclaim()).await;
    assert!(
        plan.notes.iter().any(|n| n.contains(
            "restored copy proven: DataDownload tenant-a.restore-test-fk8s8-8q8tz Completed"
        )),
        "{:?}",
        plan.notes
    );
    reclaimed(&sim, &client, &reclaim()).await;
    sim.shutdown().await;
}

/// A new RestoreJob `restore-test` (running, created later) blocked by the -orig PVC its deleted
/// predecessor of the same name left; the live disk is in place.
fn stale(annotated: bool) -> Vec<Value> {
    let mut objs = base_objects("Running");
    objs[3]["metadata"]["uid"] = json!("6e000000-0000-4000-8000-000000000041");
    objs[3]["metadata"]["creationTimestamp"] = json!("2026-11-25T09:00:00Z");
    let mut orig = orig_pvc(ORIG_UID, annotated.then_some(RJ_UID), "Bound");
    orig["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:40Z");
    objs.extend([
        restored_pvc(),
        pv("Retain", ORIG, ORIG_UID, annotated.then_some("Delete")),
        orig,
    ]);
    objs
}

#[tokio::test]
async fn a_stale_orig_pvc_of_a_deleted_restorejob_of_the_same_name_is_reclaimed_by_consent() {
    // Its RestoreJob is gone: nothing proves its disk was restored, so only consent lets it go.
    let (sim, client) = sim_with(stale(true)).await;
    let why = refused_without_writes(&sim, &client, &reclaim()).await;
    assert!(
        why.contains("was deleted: nothing left proves the restore")
            && why.contains("--discard-only-copy"),
        "{why}"
    );
    // Annotated with the deleted RestoreJob's UID, policy recorded: reclaimed with it.
    let plan = plan_ok(&client, &discard(reclaim())).await;
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("left by a deleted RestoreJob (created 2026-11-20")),
        "{:?}",
        plan.notes
    );
    reclaimed(&sim, &client, &discard(reclaim())).await;
    let shown = kubectl(
        &sim,
        &[
            "get",
            "pv",
            "pv-data",
            "-o",
            "jsonpath={.spec.persistentVolumeReclaimPolicy}",
        ],
    )
    .await;
    assert_eq!(shown, "Delete");
    // The running restore is untouched.
    assert!(get(&sim, Kind::RestoreJob, NS, "restore-test").is_some());
    sim.shutdown().await;

    // No annotation, created before the running RestoreJob: the operator picks the policy.
    let (sim, client) = sim_with(stale(false)).await;
    let why = refused_without_writes(&sim, &client, &discard(reclaim())).await;
    assert!(why.contains("--policy"), "{why}");
    let req = ActionRequest {
        policy: Some("Retain".into()),
        ..discard(reclaim())
    };
    reclaimed(&sim, &client, &req).await;
    let shown = kubectl(
        &sim,
        &[
            "get",
            "pv",
            "pv-data",
            "-o",
            "jsonpath={.spec.persistentVolumeReclaimPolicy}",
        ],
    )
    .await;
    assert_eq!(shown, "Retain");
    sim.shutdown().await;

    // Near miss: the running RestoreJob's own -orig PVC (created after it) stays refused.
    let mut own = stale(false);
    own[6]["metadata"]["creationTimestamp"] = json!("2026-11-25T09:00:30Z");
    let (sim, client) = sim_with(own).await;
    let why = refused_without_writes(&sim, &client, &reclaim()).await;
    assert!(
        why.contains("Running") && why.contains("safety copy"),
        "{why}"
    );
    sim.shutdown().await;
}
