//! reclaim-orig against another client deleting the restored copy its proof stands on, at each
//! point of the action, interleaved deterministically through the executor's progress events
//! (no timing): after the executor's fresh read, the copy proof is judged again before the
//! DELETE and nothing is deleted; after that re-judgement, the DELETE goes (no precondition
//! spans two objects) but the action stops instead of saying "done", audited. And the DELETE
//! carries the resourceVersion of what was judged: an `-orig` PVC changed in between is not
//! deleted on that judgement.

mod actions_support;

use actions_support::*;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use restorewatch::actions::Op;
use restorewatch::actions::execute::{Executor, Outcome, StepEvent};
use restorewatch::analysis::ActionKind;
use serde_json::{Value, json};

const ORIG_UID: &str = "0e000000-0000-4000-8000-000000000005";
const RESTORED: &str = "vm-disk-data";

/// A finished restore whose copy is proven: what reclaim-orig deletes the `-orig` PVC on.
fn proven() -> Vec<Value> {
    let mut objs = base_objects("Succeeded");
    objs.extend([
        restored_pvc(),
        pv("Retain", ORIG, ORIG_UID, Some("Delete")),
        orig_pvc(ORIG_UID, Some(RJ_UID), "Bound"),
    ]);
    objs.extend(restore_proof("Completed"));
    objs
}

/// The `-orig` PVC's UID, resourceVersion and deletionTimestamp as kubectl shows them.
async fn orig_as_kubectl_sees_it(sim: &restorewatch::sim::SimHandle) -> String {
    kubectl(
        sim,
        &[
            "get",
            "pvc",
            "-n",
            NS,
            ORIG,
            "-o",
            "jsonpath={.metadata.uid} {.metadata.resourceVersion} {.metadata.deletionTimestamp}",
        ],
    )
    .await
}

/// Runs the reclaim, calling `at` (which blocks on its own API calls) once, on the first event
/// `when` matches. Returns the outcome and the audit lines.
async fn reclaim_with(
    client: &kube::Client,
    when: impl Fn(&StepEvent) -> bool,
    at: impl Fn(),
) -> (Outcome, Vec<Value>) {
    let plan = plan_ok(client, &pvc_req(ActionKind::ReclaimOrig, ORIG)).await;
    assert!(
        matches!(
            plan.ops.as_slice(),
            [Op::SetReclaimPolicy { .. }, Op::DeletePvc { .. }]
        ),
        "{:?}",
        plan.ops
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let ex = Executor {
        audit: Some(audit.clone()),
        ..executor(client, None)
    };
    let mut fired = false;
    let out = ex
        .execute(&plan, |e| {
            if !fired && when(&e) {
                fired = true;
                tokio::task::block_in_place(&at);
            }
        })
        .await;
    (out, audit_lines(&audit))
}

/// The other client: deletes the restored PVC through the API and waits until it is gone.
fn deleting_the_restored_copy<'a>(
    sim: &'a restorewatch::sim::SimHandle,
    client: &'a kube::Client,
) -> impl Fn() + 'a {
    let handle = tokio::runtime::Handle::current();
    move || {
        handle.block_on(async {
            let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), NS);
            pvcs.delete(RESTORED, &DeleteParams::default())
                .await
                .expect("the other client deletes the restored PVC");
            wait_gone(sim, NS, RESTORED).await;
            sim.controllers_idle().await;
        })
    }
}

fn is_delete_start(e: &StepEvent) -> bool {
    matches!(e, StepEvent::Start(Op::DeletePvc { .. }))
}

/// The re-judgement right before the DELETE (the policy patch before it is judged too).
fn is_delete_rejudged(e: &StepEvent) -> bool {
    matches!(e, StepEvent::Rejudged(Op::DeletePvc { .. }, _))
}

/// The PV's reclaim policy as kubectl shows it.
async fn pv_policy(sim: &restorewatch::sim::SimHandle) -> String {
    kubectl(
        sim,
        &[
            "get",
            "pv",
            "pv-data",
            "-o",
            "jsonpath={.spec.persistentVolumeReclaimPolicy}",
        ],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_restored_copy_deleted_after_the_fresh_read_stops_the_reclaim_and_nothing_is_deleted() {
    let (sim, client) = sim_with(proven()).await;
    sim.controllers_idle().await;
    let before = orig_as_kubectl_sees_it(&sim).await;
    assert!(before.starts_with(ORIG_UID), "{before}");
    // After the executor's fresh read and plan, before the DELETE: the window of the incident.
    let (out, audit) = reclaim_with(
        &client,
        is_delete_start,
        deleting_the_restored_copy(&sim, &client),
    )
    .await;
    let Outcome::Stopped { writes, reason } = &out else {
        panic!("must stop, the proof fell: {out:?}")
    };
    assert_eq!(
        *writes, 2,
        "the PV policy was set to Delete for the reclaim, then back to Retain when the proof fell"
    );
    assert!(
        reason.contains("no longer proven on a fresh read just before the delete")
            && reason.contains(&format!("the restored {RESTORED} does not exist"))
            && reason.contains("was not deleted")
            && reason.contains("PV pv-data was set back to Retain"),
        "{reason}"
    );
    assert_eq!(
        pv_policy(&sim).await,
        "Retain",
        "the -orig PVC is the only copy now: its volume must not go with a later delete"
    );
    sim.controllers_idle().await;
    assert_eq!(
        orig_as_kubectl_sees_it(&sim).await,
        before,
        "the -orig PVC is untouched: same UID, same resourceVersion, no deletionTimestamp"
    );
    let last = audit.last().expect("audited");
    assert!(
        last["operation"]
            .as_str()
            .is_some_and(|o| o.contains("delete"))
            && last["outcome"]
                .as_str()
                .is_some_and(|o| o.starts_with("stopped: the restored copy is no longer proven")),
        "{last}"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_restored_copy_deleted_after_the_rejudgement_is_a_stop_not_done() {
    let (sim, client) = sim_with(proven()).await;
    sim.controllers_idle().await;
    // Between the re-judgement and the DELETE: no precondition on the -orig PVC can see another
    // object go, so the DELETE goes; "done" must not be said on a proof that fell.
    let (out, audit) = reclaim_with(
        &client,
        is_delete_rejudged,
        deleting_the_restored_copy(&sim, &client),
    )
    .await;
    let Outcome::Stopped { writes, reason } = &out else {
        panic!("must stop, not claim done: {out:?}")
    };
    assert_eq!(*writes, 2);
    assert!(
        reason.contains("on a fresh read after the delete its restored copy is no longer proven"),
        "{reason}"
    );
    let last = audit.last().expect("audited");
    assert!(
        last["outcome"].as_str().is_some_and(
            |o| o.starts_with("stopped: -orig PVC tenant-a/vm-disk-data-orig-de3e was deleted")
        ),
        "{last}"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orig_pvc_changed_after_its_judgement_is_not_deleted_on_that_judgement() {
    let (sim, client) = sim_with(proven()).await;
    sim.controllers_idle().await;
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), NS);
    let (out, audit) = reclaim_with(&client, is_delete_rejudged, || {
        tokio::runtime::Handle::current().block_on(async {
            pvcs.patch(
                ORIG,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
            )
            .await
            .expect("the other client labels the -orig PVC");
        })
    })
    .await;
    // The judged resourceVersion is stale: 409, re-read, judged again, then deleted.
    assert!(
        audit.iter().any(|l| l["operation"]
            .as_str()
            .is_some_and(|o| o.contains("delete"))
            && l["outcome"]
                .as_str()
                .is_some_and(|o| o.starts_with("conflict, re-planned"))),
        "{audit:?}"
    );
    assert!(matches!(out, Outcome::Completed { writes: 2 }), "{out:?}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_restored_copy_deleted_before_the_policy_patch_changes_nothing() {
    let (sim, client) = sim_with(proven()).await;
    sim.controllers_idle().await;
    let before = orig_as_kubectl_sees_it(&sim).await;
    // After the executor's fresh read, before the PV leaves Retain: the patch is judged on the
    // same fresh proof as the delete, and not sent.
    let (out, _audit) = reclaim_with(
        &client,
        |e| matches!(e, StepEvent::Start(Op::SetReclaimPolicy { .. })),
        deleting_the_restored_copy(&sim, &client),
    )
    .await;
    let Outcome::Stopped { writes, reason } = &out else {
        panic!("must stop, the proof fell: {out:?}")
    };
    assert_eq!(*writes, 0, "{reason}");
    assert!(
        reason.contains("no longer proven on a fresh read"),
        "{reason}"
    );
    sim.controllers_idle().await;
    assert_eq!(pv_policy(&sim).await, "Retain");
    assert_eq!(orig_as_kubectl_sees_it(&sim).await, before);
    sim.shutdown().await;
}
