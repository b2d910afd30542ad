//! The guarded actions against the emulator through the real kube client: every starting state,
//! a crash after every single write followed by a resume, a controller writing at the same time,
//! and the safety invariants (foreign `-orig` PVCs untouched, no volume ever left to be reclaimed
//! by accident, an `-orig` PVC never deleted while its PV would leak).

mod actions_support;

use actions_support::*;
use restorewatch::actions::execute::{Executor, Outcome, StepEvent, plan_fresh};
use restorewatch::actions::{ActionRequest, Op, Target};
use restorewatch::analysis::ActionKind;
use restorewatch::model::Kind;
use restorewatch::sim::{PatchKind, Sim, SimConfig};
use serde_json::{Value, json};

#[tokio::test]
async fn resume_rename_finishes_from_every_starting_state_and_a_rerun_changes_nothing() {
    for (state, recorded) in [
        ("fresh", "Delete"),
        ("orig-created", "Delete"),
        ("original-deleted", "Delete"),
        ("prefix-race", ""),
        ("complete", "Delete"),
    ] {
        let (sim, client) = sim_binding(rename_state(state)).await;
        let plan = plan_ok(&client, &rename_req()).await;
        if state == "complete" {
            assert!(
                plan.ops.is_empty(),
                "a finished rename plans nothing: {:?}",
                plan.ops
            );
        }
        let out = executor(&client, None).execute(&plan, |_| {}).await;
        assert!(matches!(out, Outcome::Completed { .. }), "{state}: {out:?}");
        wait_gone(&sim, NS, "vm-disk-data").await;
        assert_kept(&sim, state, recorded);
        // Idempotent: a second run finds nothing to do and writes nothing.
        let rv = sim.store().current_rv();
        let again = plan_ok(&client, &rename_req()).await;
        assert!(again.ops.is_empty(), "{state}: rerun plans {:?}", again.ops);
        let out = executor(&client, None).execute(&again, |_| {}).await;
        assert_eq!(out, Outcome::Completed { writes: 0 }, "{state}");
        assert_eq!(
            sim.store().current_rv(),
            rv,
            "{state}: a rerun must not write"
        );
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn a_crash_after_any_write_then_a_rerun_converges_to_the_same_end_state() {
    let (sim, client) = sim_binding(rename_state("fresh")).await;
    let full = plan_ok(&client, &rename_req()).await;
    let n = full.ops.len();
    assert_eq!(
        n, 5,
        "annotate, Retain, create, delete, repoint: {:?}",
        full.ops
    );
    executor(&client, None).execute(&full, |_| {}).await;
    wait_gone(&sim, NS, "vm-disk-data").await;
    let reference = rename_outcome(&sim);
    sim.shutdown().await;

    for k in 0..=n {
        let (sim, client) = sim_binding(rename_state("fresh")).await;
        let plan = plan_ok(&client, &rename_req()).await;
        let first = executor(&client, Some(k)).execute(&plan, |_| {}).await;
        assert_eq!(
            first,
            Outcome::Interrupted { writes: k }.min_with(n),
            "crash after write {k}"
        );
        // The operator runs the action again: it plans only what is left.
        let resumed = plan_ok(&client, &rename_req()).await;
        assert_eq!(
            resumed.ops.len(),
            n - k,
            "after {k} writes the rest is planned: {:?}",
            resumed.ops
        );
        let second = executor(&client, None).execute(&resumed, |_| {}).await;
        assert_eq!(
            second,
            Outcome::Completed { writes: n - k },
            "resume after {k}"
        );
        wait_gone(&sim, NS, "vm-disk-data").await;
        assert_eq!(
            rename_outcome(&sim),
            reference,
            "end state after a crash at write {k}"
        );
        sim.shutdown().await;
    }
}

trait MinWith {
    fn min_with(self, n: usize) -> Outcome;
}
impl MinWith for Outcome {
    /// A run allowed `k >= n` writes simply completes.
    fn min_with(self, n: usize) -> Outcome {
        match self {
            Outcome::Interrupted { writes } if writes >= n => Outcome::Completed { writes: n },
            o => o,
        }
    }
}

#[tokio::test]
async fn a_controller_writing_concurrently_causes_a_re_read_not_a_blind_retry() {
    let (sim, client) = sim_binding(rename_state("orig-created")).await;
    let plan = plan_ok(&client, &rename_req()).await;
    let store = sim.store().clone();
    let mut conflicts = 0;
    let mut touched = false;
    let out = executor(&client, None)
        .execute(&plan, |e| match e {
            // Between the executor's fresh read and its write, the controller (or the PV
            // controller) updates the PV: the write's resourceVersion is now stale.
            StepEvent::Start(Op::SetClaimRef { .. }) if !touched => {
                touched = true;
                store
                    .patch_object(
                        Kind::PersistentVolume,
                        "",
                        "pv-data",
                        PatchKind::Merge,
                        &json!({"metadata": {"labels": {"touched-by": "pv-controller"}}}),
                    )
                    .expect("concurrent write");
            }
            StepEvent::Conflict(_, msg) => {
                conflicts += 1;
                // One line that says what happened, not the Debug form of the API's Status.
                assert_eq!(
                    msg,
                    "PV pv-data changed since it was read (another writer, e.g. the PV controller): re-reading"
                );
            }
            _ => {}
        })
        .await;
    assert!(matches!(out, Outcome::Completed { .. }), "{out:?}");
    assert_eq!(
        conflicts, 1,
        "the stale write must be refused by the server once, then re-planned"
    );
    wait_gone(&sim, NS, "vm-disk-data").await;
    assert_kept(&sim, "concurrent", "Delete");
    let pv = get(&sim, Kind::PersistentVolume, "", "pv-data").unwrap();
    assert_eq!(
        pv["metadata"]["labels"]["touched-by"], "pv-controller",
        "the controller's write is kept, not overwritten"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn a_foreign_orig_pvc_is_never_touched() {
    let mut objs = base_objects("Running");
    objs.extend([
        original_pvc(),
        pv("Delete", "vm-disk-data", PVC_UID, None),
        // Another RestoreJob's -orig PVC on its own PV.
        orig_pvc(
            "f0000000-0000-4000-8000-000000000006",
            Some("99999999-0000-4000-8000-000000000000"),
            "Bound",
        ),
    ]);
    let (sim, client) = sim_binding(objs).await;
    let rv = sim.store().current_rv();
    let refused = plan_fresh(&client, &rename_req())
        .await
        .expect("reads work");
    let reason = refused.expect_err("must refuse").reason;
    assert!(
        reason.contains(ORIG) && reason.contains("never touched"),
        "{reason}"
    );
    assert_eq!(sim.store().current_rv(), rv, "nothing written");
    sim.shutdown().await;
}

#[tokio::test]
async fn reclaim_orig_restores_the_policy_before_the_delete_and_refuses_while_unsafe() {
    // A finished restore: the -orig PVC Bound to a Retain PV whose recorded policy is Delete;
    // the disk restored under its own name.
    let mut objs = base_objects("Succeeded");
    objs.extend([
        restored_pvc(),
        pv(
            "Retain",
            ORIG,
            "0e000000-0000-4000-8000-000000000005",
            Some("Delete"),
        ),
        orig_pvc(
            "0e000000-0000-4000-8000-000000000005",
            Some(RJ_UID),
            "Bound",
        ),
    ]);
    // Its copy proven restored: a Completed DataDownload of this restore.
    objs.extend(restore_proof("Completed"));
    let (sim, client) = sim_binding(objs.clone()).await;
    let req = ActionRequest {
        action: ActionKind::ReclaimOrig,
        target: Target::Pvc {
            namespace: NS.into(),
            name: ORIG.into(),
        },
        policy: None,
        discard_only_copy: false,
        leave_running: false,
    };
    let plan = plan_ok(&client, &req).await;
    assert!(
        matches!(plan.ops.as_slice(), [Op::SetReclaimPolicy { to, .. }, Op::DeletePvc { .. }] if to == "Delete"),
        "{:?}",
        plan.ops
    );
    // Record the PV's policy at the moment the PVC's deletion starts.
    let store = sim.store().clone();
    let mut policy_at_delete = None;
    let out = executor(&client, None)
        .execute(&plan, |e| {
            if let StepEvent::Start(Op::DeletePvc { .. }) = e {
                policy_at_delete = store
                    .get(Kind::PersistentVolume, "", "pv-data")
                    .and_then(|p| {
                        p["spec"]["persistentVolumeReclaimPolicy"]
                            .as_str()
                            .map(str::to_string)
                    });
            }
        })
        .await;
    assert_eq!(out, Outcome::Completed { writes: 2 });
    assert_eq!(
        policy_at_delete.as_deref(),
        Some("Delete"),
        "the PVC goes only once the PV would be reclaimed"
    );
    wait_gone(&sim, NS, ORIG).await;
    sim.shutdown().await;

    // Refused while the RestoreJob still runs.
    let mut running = objs.clone();
    running[3] = rj("Running");
    let (sim, client) = sim_binding(running).await;
    let r = plan_fresh(&client, &req)
        .await
        .unwrap()
        .expect_err("refused while running");
    assert!(r.reason.contains("Running"), "{}", r.reason);
    sim.shutdown().await;

    // Refused while a Pod mounts it.
    let mut mounted = objs.clone();
    mounted.push(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "inspect", "namespace": NS},
        "spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": ORIG}}]}, "status": {"phase": "Running"}}));
    let (sim, client) = sim_binding(mounted).await;
    let r = plan_fresh(&client, &req)
        .await
        .unwrap()
        .expect_err("refused while mounted");
    assert!(r.reason.contains("inspect"), "{}", r.reason);
    sim.shutdown().await;

    // No recorded policy: the operator must choose; Retain keeps the PV as it is.
    let mut unrecorded = base_objects("Succeeded");
    unrecorded.extend([
        restored_pvc(),
        pv("Retain", ORIG, "0e000000-0000-4000-8000-000000000005", None),
        orig_pvc("0e000000-0000-4000-8000-000000000005", None, "Bound"),
    ]);
    unrecorded.extend(restore_proof("Completed"));
    let (sim, client) = sim_binding(unrecorded).await;
    let r = plan_fresh(&client, &req)
        .await
        .unwrap()
        .expect_err("must ask for a policy");
    assert!(
        r.reason.contains("--policy") && r.reason.contains("StorageClass says Delete"),
        "{}",
        r.reason
    );
    let chosen = ActionRequest {
        policy: Some("Retain".into()),
        ..req.clone()
    };
    let plan = plan_ok(&client, &chosen).await;
    assert!(
        matches!(plan.ops.as_slice(), [Op::DeletePvc { .. }]),
        "{:?}",
        plan.ops
    );
    executor(&client, None).execute(&plan, |_| {}).await;
    wait_gone(&sim, NS, ORIG).await;
    let pv = get(&sim, Kind::PersistentVolume, "", "pv-data").expect("a Retain PV stays");
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    sim.shutdown().await;
}

fn pg_objects(server_name: &str, phase: &str) -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
            "metadata": {"name": "orders-backup", "namespace": NS},
            "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "Postgres", "name": "orders"},
                     "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "CNPG", "name": "cnpg"}}}),
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
            "metadata": {"name": "restore-orders", "namespace": NS, "uid": "a0000000-0000-4000-8000-000000000007", "creationTimestamp": "2026-11-20T10:00:00Z"},
            "spec": {"backupRef": {"name": "orders-backup"}},
            "status": {"phase": phase, "startedAt": "2026-11-20T10:00:01Z"}}),
        json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": {"name": "orders", "namespace": NS},
            "spec": {"bootstrap": {"enabled": true, "newServerName": "postgres-orders-restore-1"}}}),
        json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
            "metadata": {"name": "postgres-orders", "namespace": NS, "uid": "c0000000-0000-4000-8000-000000000008", "creationTimestamp": "2026-11-20T10:00:45Z"},
            "spec": {"plugins": [{"name": "barman-cloud.cloudnative-pg.io", "isWALArchiver": true,
                                  "parameters": {"barmanObjectName": "postgres-orders", "serverName": server_name}}],
                     "bootstrap": {"recovery": {"source": "postgres-orders-recovery"}}},
            "status": {"phase": "Setting up primary"}}),
    ]
}

#[tokio::test]
async fn fix_servername_patches_with_a_test_of_the_old_value() {
    let (sim, client) = sim_binding(pg_objects("postgres-orders", "Running")).await;
    let req = ActionRequest {
        action: ActionKind::FixServername,
        target: Target::Restore {
            namespace: NS.into(),
            name: "restore-orders".into(),
        },
        policy: None,
        discard_only_copy: false,
        leave_running: false,
    };
    let plan = plan_ok(&client, &req).await;
    assert_eq!(plan.ops.len(), 1);
    // The backup driver writes the old value back with a different one in between: the test op
    // fails (422), the executor re-reads, and a plan that differs from the confirmed one stops.
    let store = sim.store().clone();
    let mut raced = false;
    let out = executor(&client, None)
        .execute(&plan, |e| {
            if let StepEvent::Start(_) = e
                && !raced
            {
                raced = true;
                store
                    .patch_object(Kind::CnpgCluster, NS, "postgres-orders", PatchKind::Json,
                        &json!([{"op": "replace", "path": "/spec/plugins/0/parameters/serverName", "value": "postgres-orders-other"}]))
                    .expect("racing write");
            }
        })
        .await;
    match &out {
        Outcome::Stopped { reason, writes: 0 } => assert!(
            reason.contains("changed since the plan was shown"),
            "{reason}"
        ),
        other => panic!("a plan that changed under the operator must stop: {other:?}"),
    }
    // Reviewed again, it succeeds; and a second run is a no-op.
    let plan = plan_ok(&client, &req).await;
    assert_eq!(
        executor(&client, None).execute(&plan, |_| {}).await,
        Outcome::Completed { writes: 1 }
    );
    let c = get(&sim, Kind::CnpgCluster, NS, "postgres-orders").unwrap();
    assert_eq!(
        c["spec"]["plugins"][0]["parameters"]["serverName"],
        "postgres-orders-restore-1"
    );
    assert!(plan_ok(&client, &req).await.ops.is_empty());
    sim.shutdown().await;

    // Only while the restore runs.
    let (sim, client) = sim_binding(pg_objects("postgres-orders", "Failed")).await;
    let r = plan_fresh(&client, &req)
        .await
        .unwrap()
        .expect_err("refused on a finished restore");
    assert!(r.reason.contains("Failed"), "{}", r.reason);
    sim.shutdown().await;
}

#[tokio::test]
async fn resume_release_resumes_what_a_finished_restore_left_suspended() {
    let mut objs = base_objects("Failed");
    for hr in ["vm-instance-vm1", "vm-disk-data"] {
        objs.push(json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": hr, "namespace": NS}, "spec": {"suspend": true}}));
    }
    let (sim, client) = sim_binding(objs.clone()).await;
    let req = ActionRequest {
        action: ActionKind::ResumeRelease,
        target: Target::Restore {
            namespace: NS.into(),
            name: "restore-test".into(),
        },
        policy: None,
        discard_only_copy: false,
        leave_running: false,
    };
    let plan = plan_ok(&client, &req).await;
    assert_eq!(
        executor(&client, None).execute(&plan, |_| {}).await,
        Outcome::Completed { writes: 2 }
    );
    for hr in ["vm-instance-vm1", "vm-disk-data"] {
        assert_eq!(
            get(&sim, Kind::HelmRelease, NS, hr).unwrap()["spec"]["suspend"],
            false,
            "{hr}"
        );
    }
    sim.shutdown().await;

    objs[3] = rj("Running");
    let (sim, client) = sim_binding(objs).await;
    let r = plan_fresh(&client, &req)
        .await
        .unwrap()
        .expect_err("refused while running");
    assert!(r.reason.contains("on purpose"), "{}", r.reason);
    sim.shutdown().await;
}

#[tokio::test]
async fn every_write_is_audited_and_recorded_as_an_event_on_the_restore() {
    let (sim, client) = sim_binding(rename_state("orig-created")).await;
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let ex = Executor {
        audit: Some(audit.clone()),
        events: true,
        ..executor(&client, None)
    };
    let plan = plan_ok(&client, &rename_req()).await;
    let Outcome::Completed { writes } = ex.execute(&plan, |_| {}).await else {
        panic!("must complete")
    };
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), writes);
    for l in &lines {
        for key in [
            "time",
            "user",
            "context",
            "action",
            "target",
            "operation",
            "precondition",
            "outcome",
        ] {
            assert!(
                l.get(key)
                    .is_some_and(|v| !v.as_str().unwrap_or("").is_empty()),
                "audit line lacks {key}: {l}"
            );
        }
        assert_eq!(l["action"], "resume-rename");
    }
    let events = sim.store().all(Kind::Event, &Default::default());
    let ev = events
        .iter()
        .find(|e| e["reason"] == "RestorewatchAction")
        .expect("an Event on the RestoreJob");
    assert_eq!(ev["involvedObject"]["name"], "restore-test");
    assert_eq!(ev["involvedObject"]["uid"], RJ_UID);
    sim.shutdown().await;
}

#[tokio::test]
async fn rbac_answers_before_anything_is_written() {
    use restorewatch::sim::{Policy, Rule};
    let mut cfg = SimConfig::default();
    cfg.tokens.insert(
        "viewer".into(),
        Policy {
            user: "viewer".into(),
            rules: vec![Rule {
                verbs: vec![
                    "get".into(),
                    "list".into(),
                    "watch".into(),
                    "patch".into(),
                    "create".into(),
                ],
                resources: vec!["*".into()],
                namespaces: vec![],
            }],
        },
    );
    let sim = Sim::start(cfg).await.unwrap();
    for o in rename_state("orig-created") {
        sim.store().load(o).unwrap();
    }
    let client = sim.client_with_token("viewer").unwrap();
    let plan = plan_ok(&client, &rename_req()).await;
    let denied = restorewatch::actions::rbac::check(&client, &plan.ops)
        .await
        .expect("SSAR answers");
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0].verb, "delete");
    assert_eq!(denied[0].resource, "persistentvolumeclaims");
    sim.shutdown().await;
}

// kubectl is run with a blocking call: the emulator needs another thread to answer it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_sees_the_repaired_state() {
    let (sim, client) = sim_binding(rename_state("prefix-race")).await;
    let plan = plan_ok(&client, &rename_req()).await;
    executor(&client, None).execute(&plan, |_| {}).await;
    wait_gone(&sim, NS, "vm-disk-data").await;
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).unwrap();
    let out = std::process::Command::new("kubectl")
        .args([
            "--kubeconfig",
            kc.to_str().unwrap(),
            "get",
            "pv",
            "pv-data",
            "-o",
            "jsonpath={.spec.claimRef.name} {.spec.persistentVolumeReclaimPolicy}",
        ])
        .output()
        .expect("kubectl is installed (the tests check the emulator against it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{ORIG} Retain")
    );
    let out = std::process::Command::new("kubectl")
        .args([
            "--kubeconfig",
            kc.to_str().unwrap(),
            "get",
            "pvc",
            "-n",
            NS,
            "-o",
            "name",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("persistentvolumeclaim/{ORIG}")
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn an_operator_keeps_a_disk_before_an_in_place_vmdisk_restore() {
    // The controller prepares nothing for a VMDisk restore: the operator keeps the disk first.
    let mut objs = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
            "metadata": {"name": "data-backup", "namespace": NS},
            "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMDisk", "name": "data"},
                     "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "velero"}}}),
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
            "metadata": {"name": "restore-test", "namespace": NS, "uid": RJ_UID, "creationTimestamp": "2026-11-20T10:00:00Z"},
            "spec": {"backupRef": {"name": "data-backup"}}}),
    ];
    objs.extend([original_pvc(), pv("Delete", "vm-disk-data", PVC_UID, None)]);
    let (sim, client) = sim_binding(objs).await;
    let plan = plan_ok(&client, &rename_req()).await;
    assert_eq!(plan.ops.len(), 5, "{:?}", plan.ops);
    assert_eq!(
        executor(&client, None).execute(&plan, |_| {}).await,
        Outcome::Completed { writes: 5 }
    );
    wait_gone(&sim, NS, "vm-disk-data").await;
    assert_kept(&sim, "vmdisk", "Delete");
    sim.shutdown().await;
}

#[tokio::test]
async fn fix_servername_refuses_the_old_cluster_before_the_purge() {
    // The live Cluster predates the restore: it is the one about to be purged.
    let mut objs = pg_objects("postgres-orders", "Running");
    objs[4]["metadata"]["creationTimestamp"] = json!("2026-10-01T08:00:00Z");
    let (sim, client) = sim_with(objs).await;
    let req = ActionRequest::new(
        ActionKind::FixServername,
        Target::Restore {
            namespace: NS.into(),
            name: "restore-orders".into(),
        },
    );
    let why = refused_without_writes(&sim, &client, &req).await;
    assert!(
        why.contains("not the one re-rendered") && why.contains("Expected empty archive"),
        "{why}"
    );
    let shown = kubectl(
        &sim,
        &[
            "get",
            "clusters.postgresql.cnpg.io",
            "-n",
            NS,
            "postgres-orders",
            "-o",
            "jsonpath={.spec.plugins[0].parameters.serverName}",
        ],
    )
    .await;
    assert_eq!(shown, "postgres-orders");
    sim.shutdown().await;
}

#[tokio::test]
async fn an_event_that_cannot_be_recorded_is_said_and_audited() {
    use restorewatch::sim::{Policy, Rule};
    // May read everything and write PVs and PVCs, but not create Events.
    let mut cfg = SimConfig::default();
    cfg.tokens.insert(
        "repairer".into(),
        Policy {
            user: "repairer".into(),
            rules: vec![
                Rule {
                    verbs: vec!["get".into(), "list".into(), "watch".into()],
                    resources: vec!["*".into()],
                    namespaces: vec![],
                },
                Rule {
                    verbs: vec!["*".into()],
                    resources: vec!["persistentvolumes".into(), "persistentvolumeclaims".into()],
                    namespaces: vec![],
                },
            ],
        },
    );
    let sim = Sim::start(cfg).await.unwrap();
    let mut objs = base_objects("Succeeded");
    objs.extend([
        restored_pvc(),
        pv(
            "Retain",
            ORIG,
            "0e000000-0000-4000-8000-000000000005",
            Some("Delete"),
        ),
        orig_pvc(
            "0e000000-0000-4000-8000-000000000005",
            Some(RJ_UID),
            "Bound",
        ),
    ]);
    // Its copy proven restored: a Completed DataDownload of this restore.
    objs.extend(restore_proof("Completed"));
    for o in objs {
        sim.store().load(o).unwrap();
    }
    let client = sim.client_with_token("repairer").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let ex = Executor {
        audit: Some(audit.clone()),
        events: true,
        ..executor(&client, None)
    };
    let plan = plan_ok(&client, &pvc_req(ActionKind::ReclaimOrig, ORIG)).await;
    let mut said = Vec::new();
    let out = ex
        .execute(&plan, |e| {
            if let StepEvent::RecordFailed(m) = e {
                said.push(m);
            }
        })
        .await;
    assert_eq!(out, Outcome::Completed { writes: 2 });
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("the Event on RestoreJob tenant-a/restore-test was not recorded")
            && said[0].contains("403"),
        "{said:?}"
    );
    assert!(
        !said[0].contains("ErrorResponse"),
        "one line, not the Debug form: {said:?}"
    );
    let lines: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "two writes and the failed Event: {lines:?}");
    assert!(
        lines[2]["operation"]
            .as_str()
            .is_some_and(|o| o.contains("record Event")),
        "{}",
        lines[2]
    );
    assert!(
        lines[2]["outcome"]
            .as_str()
            .is_some_and(|o| o.starts_with("failed:")),
        "{}",
        lines[2]
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn the_controller_creating_the_orig_pvc_meanwhile_is_a_one_line_conflict_then_a_resume() {
    let (sim, client) = sim_binding(rename_state("fresh")).await;
    let plan = plan_ok(&client, &rename_req()).await;
    let store = sim.store().clone();
    let mut raced = false;
    let mut said = Vec::new();
    let out = executor(&client, None)
        .execute(&plan, |e| match e {
            // The fixed controller creates its own -orig PVC between our read and our create.
            StepEvent::Start(Op::CreateOrigPvc { .. }) if !raced => {
                raced = true;
                let mut o = orig_pvc(
                    "0e000000-0000-4000-8000-000000000005",
                    Some(RJ_UID),
                    "Pending",
                );
                o["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:50Z");
                store.load(o).expect("the controller's create");
            }
            StepEvent::Conflict(_, msg) => said.push(msg),
            _ => {}
        })
        .await;
    assert!(matches!(out, Outcome::Completed { .. }), "{out:?}");
    assert_eq!(
        said,
        vec![
            "PVC tenant-a/vm-disk-data-orig-de3e was created since it was read (another writer): re-reading"
                .to_string()
        ]
    );
    wait_gone(&sim, NS, "vm-disk-data").await;
    assert_kept(&sim, "raced create", "Delete");
    sim.shutdown().await;
}
