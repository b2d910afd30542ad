//! Proof before deletion (issue 17): reclaim-orig deletes an `-orig` PVC only on positive
//! evidence that its disk was restored, and a reclaim policy is recorded only when known. Over
//! the whole evidence space an action reads, on the emulator with its controllers on: without
//! consent nothing is written unless the copy is proven (checked through kubectl), with it the
//! action completes.

mod actions_support;

use actions_support::*;
use restorewatch::actions::execute::{Outcome, plan_fresh};
use restorewatch::actions::{ActionRequest, Target};
use restorewatch::analysis::{ActionKind, Code, Settings, analyze};
use restorewatch::cluster::Snapshot;
use restorewatch::model::{Kind, parse_object};
use restorewatch::sim::SimHandle;
use serde_json::{Value, json};

const ORIG_UID: &str = "0e000000-0000-4000-8000-000000000005";
const RESTORE_UID: &str = "9ff8f956-0000-4000-8000-000000000031";
const OLD_RESTORE_UID: &str = "9ff8f956-0000-4000-8000-000000000032";
/// After the RestoreJob (created 10:00:00, started 10:00:01) and before it.
const AFTER: &str = "2026-11-20T10:00:20Z";
const BEFORE: &str = "2026-11-19T09:00:00Z";

fn reclaim() -> ActionRequest {
    pvc_req(ActionKind::ReclaimOrig, ORIG)
}

fn velero_restore(name: &str, uid: &str, created: &str, phase: &str) -> Value {
    json!({"apiVersion": "velero.io/v1", "kind": "Restore",
        "metadata": {"name": name, "namespace": "cozy-velero", "uid": uid, "creationTimestamp": created,
                     "generateName": "tenant-a.restore-test-",
                     "labels": {"backups.cozystack.io/owned-by.BackupJobName": "restore-test",
                                "backups.cozystack.io/owned-by.BackupJobNamespace": NS}},
        "status": {"phase": phase}})
}

fn data_download(restore: &str, uid: &str, created: &str, phase: &str) -> Value {
    json!({"apiVersion": "velero.io/v2alpha1", "kind": "DataDownload",
        "metadata": {"name": format!("{restore}-dd"), "namespace": "cozy-velero", "creationTimestamp": created,
                     "labels": {"velero.io/restore-uid": uid, "velero.io/restore-name": restore}},
        "spec": {"targetVolume": {"pvc": "vm-disk-data", "namespace": NS, "pv": ""},
                 "operationTimeout": "10m", "snapshotID": "s1"},
        "status": {"phase": phase, "completionTimestamp": created,
                   "progress": {"bytesDone": 10737418240_i64, "totalBytes": 10737418240_i64}}})
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rj {
    /// No RestoreJob and no `restore-job-uid` (controller before the fix, job gone).
    None,
    Running,
    Failed,
    Succeeded,
    /// Annotated with the UID of a RestoreJob that was deleted.
    Deleted,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Restored {
    None,
    Pending,
    Bound,
    BoundBeforeRj,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Download {
    None,
    Failed,
    Completed,
    /// A Completed one, of a predecessor's Velero Restore (before the RestoreJob).
    Predecessors,
}

/// One point of the evidence space: the `-orig` PVC Bound to its Retain PV (recorded Delete).
fn evidence(rj: Rj, restored: Restored, dd: Download, restore_after: bool) -> Vec<Value> {
    let phase = match rj {
        Rj::Running => "Running",
        Rj::Failed => "Failed",
        _ => "Succeeded",
    };
    let mut objs = base_objects(phase);
    if matches!(rj, Rj::None | Rj::Deleted) {
        objs.retain(|o| o["kind"] != "RestoreJob");
    }
    let mut pvc = restored_pvc();
    match restored {
        Restored::None => {}
        Restored::Pending => {
            pvc["status"]["phase"] = json!("Pending");
            objs.push(pvc);
        }
        Restored::Bound => objs.push(pvc),
        Restored::BoundBeforeRj => {
            pvc["metadata"]["creationTimestamp"] = json!(BEFORE);
            objs.push(pvc);
        }
    }
    objs.push(pv("Retain", ORIG, ORIG_UID, Some("Delete")));
    objs.push(orig_pvc(
        ORIG_UID,
        (rj != Rj::None).then_some(RJ_UID),
        "Bound",
    ));
    objs.push(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cozy-velero"}}),
    );
    let created = if restore_after { AFTER } else { BEFORE };
    let name = "tenant-a.restore-test-fk8s8";
    objs.push(velero_restore(name, RESTORE_UID, created, "Completed"));
    match dd {
        Download::None => {}
        Download::Failed => objs.push(data_download(name, RESTORE_UID, created, "Failed")),
        Download::Completed => objs.push(data_download(name, RESTORE_UID, created, "Completed")),
        Download::Predecessors => {
            let old = "tenant-a.restore-test-old42";
            objs.push(velero_restore(old, OLD_RESTORE_UID, BEFORE, "Completed"));
            objs.push(data_download(old, OLD_RESTORE_UID, BEFORE, "Completed"));
        }
    }
    objs
}

/// The resourceVersion of every PV and PVC as kubectl prints them.
async fn versions(sim: &SimHandle) -> String {
    kubectl(
        sim,
        &[
            "get",
            "pv,pvc",
            "-A",
            "-o",
            "jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}",
        ],
    )
    .await
}

/// Plans from fresh reads, expects a refusal, and checks through kubectl (and the emulator's
/// global resourceVersion) that nothing was written.
async fn refused_untouched(sim: &SimHandle, client: &kube::Client, req: &ActionRequest) -> String {
    sim.controllers_idle().await;
    let before = versions(sim).await;
    let rv = sim.store().current_rv();
    let reason = match plan_fresh(client, req).await.expect("reads work") {
        Ok(p) => panic!("expected a refusal, got {:?}", p.ops),
        Err(r) => r.reason,
    };
    sim.controllers_idle().await;
    assert_eq!(sim.store().current_rv(), rv, "written: {reason}");
    assert_eq!(
        versions(sim).await,
        before,
        "kubectl sees a change: {reason}"
    );
    reason
}

/// What the refusal must name, from the first missing link, worked out apart from the code.
fn expected_missing(rj: Rj, restored: Restored, dd: Download, after: bool) -> Option<&'static str> {
    Some(match rj {
        Rj::None | Rj::Deleted => "was deleted: nothing left proves the restore",
        Rj::Running => "safety copy",
        Rj::Failed => "is Failed, not Succeeded",
        Rj::Succeeded => match restored {
            Restored::None => "the restored vm-disk-data does not exist",
            Restored::Pending => "the restored vm-disk-data is Pending, not Bound",
            Restored::BoundBeforeRj => "was not created after RestoreJob restore-test started",
            Restored::Bound => match (after, dd) {
                (false, Download::None) => {
                    "no Velero Restore of RestoreJob restore-test created after it"
                }
                (false, _) => "belongs to a Velero Restore created before this RestoreJob",
                (true, Download::None | Download::Predecessors) => {
                    "no DataDownload for vm-disk-data"
                }
                (true, Download::Failed) => "is Failed, not Completed",
                (true, Download::Completed) => return None,
            },
        },
    })
}

/// A case's objects moved into a namespace of their own, with their cluster-wide names (PVs,
/// StorageClass) and UIDs made its own: one emulator holds every case of a matrix.
fn isolate(objs: Vec<Value>, i: usize) -> (String, Vec<Value>) {
    let ns = format!("case-{i:03}");
    let text = serde_json::to_string(&objs)
        .expect("json")
        .replace(NS, &ns)
        .replace("\"pv-data\"", &format!("\"pv-data-{i}\""))
        .replace("\"pv-restored\"", &format!("\"pv-restored-{i}\""))
        .replace("\"replicated\"", &format!("\"replicated-{i}\""))
        .replace("-4000-8000-", &format!("-4{i:03}-8000-"));
    (ns, serde_json::from_str(&text).expect("json"))
}

fn request(action: ActionKind, ns: &str, name: &str, discard: bool) -> ActionRequest {
    ActionRequest {
        discard_only_copy: discard,
        ..ActionRequest::new(
            action,
            Target::Pvc {
                namespace: ns.into(),
                name: name.into(),
            },
        )
    }
}

/// Runs each plan to completion, all at once (each case has its own namespace), and checks
/// that each `-orig` PVC is gone.
async fn reclaim_all(
    sim: &SimHandle,
    client: &kube::Client,
    runs: Vec<(String, String, ActionRequest)>,
) {
    let ex = executor(client, None);
    futures::future::join_all(runs.into_iter().map(|(label, ns, req)| {
        let ex = &ex;
        async move {
            let plan = plan_fresh(client, &req)
                .await
                .expect("reads work")
                .unwrap_or_else(|r| panic!("{label}: refused: {}", r.reason));
            let out = ex.execute(&plan, |_| {}).await;
            assert!(matches!(out, Outcome::Completed { .. }), "{label}: {out:?}");
            wait_gone(sim, &ns, ORIG).await;
        }
    }))
    .await;
}

type Case = (Rj, Restored, Download, bool);

/// One emulator for a group of cases, each in its own namespace: every refusal is checked to
/// have written nothing (the emulator's resourceVersion, and kubectl), then every plan that
/// may run (the proven copy, and each refused one by consent) runs to its end. Returns how
/// many were proven.
async fn reclaim_group(group: Vec<(usize, Case)>) -> usize {
    let mut objs = Vec::new();
    for (i, (rj, restored, dd, after)) in &group {
        objs.extend(isolate(evidence(*rj, *restored, *dd, *after), *i).1);
    }
    let (sim, client) = sim_with(objs).await;
    sim.controllers_idle().await;
    let before = versions(&sim).await;
    let rv = sim.store().current_rv();
    let mut runs = Vec::new();
    let mut proven = 0;
    for (i, (rj, restored, dd, after)) in &group {
        let ns = isolate(Vec::new(), *i).0;
        let label = format!(
            "RestoreJob {rj:?}, restored PVC {restored:?}, DataDownload {dd:?}, Velero Restore after the RestoreJob: {after}"
        );
        let plain = request(ActionKind::ReclaimOrig, &ns, ORIG, false);
        let planned = plan_fresh(&client, &plain).await.expect("reads work");
        match (expected_missing(*rj, *restored, *dd, *after), planned) {
            (None, Ok(_)) => {
                proven += 1;
                runs.push((label, ns, plain));
            }
            (Some(says), Err(r)) => {
                assert!(r.reason.contains(says), "{label}: {}", r.reason);
                let consent = request(ActionKind::ReclaimOrig, &ns, ORIG, true);
                if *rj == Rj::Running {
                    // The restore's own safety copy: no consent lets it go.
                    let r = plan_fresh(&client, &consent).await.expect("reads work");
                    assert!(
                        r.as_ref().is_err_and(|r| r.reason.contains("safety copy")),
                        "{label}: {r:?}"
                    );
                } else {
                    assert!(
                        r.reason.contains("--discard-only-copy"),
                        "{label}: {}",
                        r.reason
                    );
                    runs.push((label, ns, consent));
                }
            }
            (want, got) => panic!("{label}: expected {want:?}, got {got:?}"),
        }
    }
    sim.controllers_idle().await;
    assert_eq!(sim.store().current_rv(), rv, "a refusal wrote");
    assert_eq!(versions(&sim).await, before, "kubectl sees a change");
    let expected_runs = group.iter().filter(|(_, c)| c.0 != Rj::Running).count();
    assert_eq!(runs.len(), expected_runs);
    reclaim_all(&sim, &client, runs).await;
    sim.shutdown().await;
    proven
}

#[tokio::test]
async fn reclaim_over_the_evidence_space_writes_only_on_proof_or_consent() {
    let mut cases: Vec<(usize, Case)> = Vec::new();
    for rj in [
        Rj::None,
        Rj::Running,
        Rj::Failed,
        Rj::Succeeded,
        Rj::Deleted,
    ] {
        for restored in [
            Restored::None,
            Restored::Pending,
            Restored::Bound,
            Restored::BoundBeforeRj,
        ] {
            for dd in [
                Download::None,
                Download::Failed,
                Download::Completed,
                Download::Predecessors,
            ] {
                for after in [true, false] {
                    cases.push((cases.len(), (rj, restored, dd, after)));
                }
            }
        }
    }
    // Small emulators side by side: what a plan lists (the Velero namespace) stays small.
    let groups: Vec<Vec<(usize, Case)>> = cases.chunks(10).map(<[_]>::to_vec).collect();
    let proven: usize = futures::future::join_all(groups.into_iter().map(reclaim_group))
        .await
        .into_iter()
        .sum();
    assert_eq!((cases.len(), proven), (160, 1));
}

fn snapshot_of(objs: &[Value]) -> Snapshot {
    Snapshot::from_objects(
        objs.iter()
            .map(|o| parse_object(o.clone()).expect("parses")),
    )
}

/// The three states of the issue, each a way the old list of bad states lost the only copy.
#[tokio::test]
async fn the_three_ways_to_lose_the_only_copy_are_refused() {
    // 1. Succeeded, but Velero made no DataDownload for the disk: the restored PVC is empty.
    let no_download = evidence(Rj::Succeeded, Restored::Bound, Download::None, true);
    // 2. The restore failed and the operator deleted the RestoreJob; its PartiallyFailed
    //    Velero Restore and Failed DataDownload remain.
    let mut deleted = evidence(Rj::Deleted, Restored::Bound, Download::Failed, true);
    for o in deleted.iter_mut() {
        if o["kind"] == "Restore" {
            o["status"]["phase"] = json!("PartiallyFailed");
        }
    }
    for (label, objs, says) in [
        (
            "no DataDownload",
            no_download,
            "no DataDownload for vm-disk-data",
        ),
        (
            "RestoreJob deleted",
            deleted,
            "the RestoreJob that made this copy was deleted: nothing left proves the restore",
        ),
    ] {
        // No finding offers reclaim-orig on it, and the remedy says what would prove it.
        let report = analyze(
            &snapshot_of(&objs),
            &Settings::default(),
            "2026-11-21T10:00:00Z".parse().expect("time"),
        );
        let f = report
            .findings
            .iter()
            .find(|f| f.code == Code::ReclaimLeakRisk && f.objects.iter().any(|o| o.name == ORIG))
            .unwrap_or_else(|| panic!("{label}: {:#?}", report.findings));
        assert_eq!(f.action, None, "{label}: {f:?}");
        assert!(
            f.remedy.contains(says) && f.remedy.contains("What would prove the restore"),
            "{label}: {}",
            f.remedy
        );
        let row = report
            .orig_pvcs
            .iter()
            .find(|o| o.pvc.name == ORIG)
            .expect("row");
        assert!(
            !row.proof.is_proven() && row.reclaim.is_err(),
            "{label}: {row:?}"
        );

        let (sim, client) = sim_with(objs).await;
        let why = refused_untouched(&sim, &client, &reclaim()).await;
        assert!(
            why.contains(says) && why.contains("--discard-only-copy"),
            "{label}: {why}"
        );
        sim.shutdown().await;
    }

    // 3. A PV the controller before the fix set to Retain, its "Failed to keep old PVC" Event
    //    expired, under a Delete class: the policy is unknown, so reclaim asks for it.
    let mut unrecorded = evidence(Rj::Succeeded, Restored::Bound, Download::Completed, true);
    for o in unrecorded.iter_mut() {
        if (o["kind"] == "PersistentVolume" || o["kind"] == "PersistentVolumeClaim")
            && let Some(a) = o["metadata"]["annotations"].as_object_mut()
        {
            a.remove("backups.cozystack.io/original-reclaim-policy");
        }
    }
    let (sim, client) = sim_with(unrecorded).await;
    let why = refused_untouched(&sim, &client, &reclaim()).await;
    assert!(
        why.contains("unknown") && why.contains("--policy") && why.contains("says Delete"),
        "{why}"
    );
    sim.shutdown().await;
}

// ---- the policy record ---------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Record {
    OnPv,
    OnOrigPvc,
    None,
    Invalid,
}

/// A running rename of one disk: the original PVC claims the PV; with `Record::OnOrigPvc` the
/// rename already created its `-orig` PVC (recorded `Delete`).
fn policy_state(policy: &str, record: Record, class: Option<&str>, event: bool) -> Vec<Value> {
    let mut objs = base_objects("Running");
    match class {
        Some(c) => objs[1]["reclaimPolicy"] = json!(c),
        None => objs.retain(|o| o["kind"] != "StorageClass"),
    }
    objs.push(original_pvc());
    let pv_record = match record {
        Record::OnPv => Some("Delete"),
        Record::Invalid => Some("delete"),
        _ => None,
    };
    objs.push(pv(policy, "vm-disk-data", PVC_UID, pv_record));
    if record == Record::OnOrigPvc {
        objs.push(orig_pvc(ORIG_UID, Some(RJ_UID), "Pending"));
    }
    if event {
        objs.push(failed_keep_event());
    }
    objs
}

/// The policy the evidence proves, worked out apart from the code; `None` when unknown.
fn known_policy(policy: &str, record: Record, class: Option<&str>) -> Option<&'static str> {
    if policy != "Retain" {
        return Some("Delete");
    }
    match record {
        Record::OnPv | Record::OnOrigPvc => Some("Delete"),
        _ if class == Some("Retain") => Some("Retain"),
        _ => None,
    }
}

#[tokio::test]
async fn the_recorded_policy_is_never_a_guess() {
    let mut cases = Vec::new();
    for policy in ["Delete", "Retain"] {
        for record in [
            Record::OnPv,
            Record::OnOrigPvc,
            Record::None,
            Record::Invalid,
        ] {
            for class in [Some("Delete"), Some("Retain"), None] {
                for event in [true, false] {
                    cases.push((policy, record, class, event));
                }
            }
        }
    }
    let mut objs = Vec::new();
    let mut namespaces = Vec::new();
    for (i, (policy, record, class, event)) in cases.iter().enumerate() {
        let (ns, o) = isolate(policy_state(policy, *record, *class, *event), i);
        objs.extend(o);
        namespaces.push(ns);
    }
    // The emulator's own PV binder, on a short resync, binds each -orig PVC.
    let (sim, client) = sim_binding(objs).await;
    let ex = executor(&client, None);
    futures::future::join_all(cases.iter().zip(&namespaces).enumerate().map(
        |(i, ((policy, record, class, event), ns))| {
            let (ex, client, sim) = (&ex, &client, &sim);
            async move {
                let label = format!(
                    "PV {policy}, record {record:?}, class {class:?}, Event present {event}"
                );
                let req = ActionRequest::new(
                    ActionKind::ResumeRename,
                    Target::Restore {
                        namespace: ns.clone(),
                        name: "restore-test".into(),
                    },
                );
                let plan = plan_fresh(client, &req)
                    .await
                    .expect("reads")
                    .unwrap_or_else(|r| panic!("{label}: refused: {}", r.reason));
                let out = ex.execute(&plan, |_| {}).await;
                assert!(matches!(out, Outcome::Completed { .. }), "{label}: {out:?}");
                let ann = |kind, ns: &str, name: &str| {
                    get(sim, kind, ns, name).and_then(|v| {
                        v["metadata"]["annotations"]["backups.cozystack.io/original-reclaim-policy"]
                            .as_str()
                            .map(str::to_string)
                    })
                };
                let want = known_policy(policy, *record, *class).map(str::to_string);
                let on_pv = ann(Kind::PersistentVolume, "", &format!("pv-data-{i}"));
                let on_orig = ann(Kind::PersistentVolumeClaim, ns, ORIG);
                if *record == Record::Invalid {
                    // Replaced once the policy is known, else left as it is: never read as one.
                    let kept = want.clone().or(Some("delete".into()));
                    assert_eq!(on_pv, kept, "{label}: the PV's record");
                } else {
                    assert_eq!(on_pv, want, "{label}: the PV's record");
                }
                assert_eq!(on_orig, want, "{label}: the -orig PVC's record");
            }
        },
    ))
    .await;
    // And kubectl shows the same records.
    let shown = kubectl(
        &sim,
        &[
            "get",
            "pvc",
            "-A",
            "-o",
            "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}={.metadata.annotations.backups\\.cozystack\\.io/original-reclaim-policy} {end}",
        ],
    )
    .await;
    for (i, (policy, record, class, _)) in cases.iter().enumerate() {
        let want = known_policy(policy, *record, *class).unwrap_or("");
        assert!(
            shown.contains(&format!("{}/{ORIG}={want} ", namespaces[i])),
            "case {i}: {shown}"
        );
    }
    sim.shutdown().await;
}

// ---- "done" is proven ----------------------------------------------------------------------

/// resume-rename's first write deletes the original PVC; before its second (the PV's claimRef),
/// someone deletes the -orig PVC. The second write is then planned away, and the action must
/// not call that done: it stops after one write, says what the volume is left as, audits the
/// stop and puts it on the RestoreJob's Event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_skipped_because_its_object_vanished_is_a_stop_not_done() {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    use kube::api::{Api, DeleteParams};
    use restorewatch::actions::Op;
    use restorewatch::actions::execute::{Executor, StepEvent};

    let (sim, client) = sim_binding(rename_state("orig-created")).await;
    let plan = plan_fresh(&client, &rename_req())
        .await
        .expect("reads")
        .expect("planned");
    assert!(
        matches!(
            plan.ops.as_slice(),
            [Op::DeletePvc { .. }, Op::SetClaimRef { .. }]
        ),
        "{:?}",
        plan.ops
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let ex = Executor {
        audit: Some(audit.clone()),
        events: true,
        ..executor(&client, None)
    };
    let deleter: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), NS);
    let handle = tokio::runtime::Handle::current();
    let mut deleted = false;
    let out = ex
        .execute(&plan, |e| {
            if let StepEvent::Done(Op::DeletePvc { .. }) = e
                && !deleted
            {
                deleted = true;
                // The concurrent deleter, through the API, finished (the protection finalizer
                // removed, the PV controller caught up) before the executor reads again.
                tokio::task::block_in_place(|| {
                    handle.block_on(async {
                        deleter
                            .delete(ORIG, &DeleteParams::default())
                            .await
                            .expect("the -orig PVC is deleted");
                        wait_gone(&sim, NS, ORIG).await;
                        sim.controllers_idle().await;
                    })
                });
            }
        })
        .await;
    let Outcome::Stopped { writes, reason } = &out else {
        panic!("must stop, not claim done: {out:?}")
    };
    assert_eq!(*writes, 1);
    assert!(
        reason.contains(
            "-orig PVC tenant-a/vm-disk-data-orig-de3e was deleted; PV pv-data is Released (Retain, data kept)"
        ),
        "{reason}"
    );
    let shown = kubectl(
        &sim,
        &[
            "get",
            "pv",
            "pv-data",
            "-o",
            "jsonpath={.status.phase} {.spec.persistentVolumeReclaimPolicy}",
        ],
    )
    .await;
    assert_eq!(shown, "Released Retain");
    let last: Value = std::fs::read_to_string(&audit)
        .expect("audit")
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .expect("an audit line");
    assert!(
        last["outcome"]
            .as_str()
            .is_some_and(|o| o.starts_with("stopped:") && o.contains("was deleted")),
        "{last}"
    );
    let events = sim.store().all(Kind::Event, &Default::default());
    let ev = events
        .iter()
        .find(|e| e["reason"] == "RestorewatchAction")
        .expect("an Event on the RestoreJob");
    assert!(
        ev["message"]
            .as_str()
            .is_some_and(|m| m.contains("then stopped") && m.contains("was deleted")),
        "{ev}"
    );
    sim.shutdown().await;

    // Near miss: nobody deletes anything; the same plan is done, and the end state holds.
    let (sim, client) = sim_binding(rename_state("orig-created")).await;
    let plan = plan_fresh(&client, &rename_req())
        .await
        .expect("reads")
        .expect("planned");
    let out = executor(&client, None).execute(&plan, |_| {}).await;
    assert!(matches!(out, Outcome::Completed { writes: 2 }), "{out:?}");
    sim.shutdown().await;
}
