//! `restorewatch action restart-restore NS/RJ` against the emulator: refusals write nothing (as
//! kubectl sees it), success creates the new RestoreJob under a name whose -orig names are free,
//! read back, and a rerun finds it done.

mod preflight_support;

use preflight_support::*;
use restorewatch::model::Kind;
use restorewatch::model::names::{orig_pvc_name, short_hash};
use serde_json::{Value, json};

/// A restore of the VM that `failed`, with its spec.
fn old_rj(phase: &str, options: Value) -> Value {
    let mut v = rj_manifest("restore-test", options);
    v["metadata"]["uid"] = json!("5c96b3b8-0000-4000-8000-000000000001");
    v["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:00Z");
    v["status"] = json!({"phase": phase, "startedAt": "2026-11-20T10:00:01Z",
        "message": "RestoreJob failed: -orig PVC vm-disk-data-orig-de3e exists and was not created by this RestoreJob"});
    v
}

/// What kubectl shows of every RestoreJob and PVC: equal before and after means nothing written.
async fn kubectl_state(sim: &Cluster) -> String {
    let (code, out, err) = sim
        .kubectl(&[
            "get",
            "restorejobs,pvc",
            "-A",
            "-o",
            "jsonpath={range .items[*]}{.kind} {.metadata.namespace}/{.metadata.name} rv={.metadata.resourceVersion}{\"\\n\"}{end}",
        ])
        .await;
    assert_eq!(code, 0, "{err}");
    out
}

async fn restart(sim: &Cluster, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["action", "restart-restore", "tenant-a/restore-test"];
    args.extend(extra);
    let (code, out, err) = sim.run(&args, None).await;
    (code, format!("{out}{err}"))
}

/// Runs `restart-restore --yes` on `objs`: refused (exit 1), saying each of `says`, and kubectl
/// sees nothing written.
async fn refused_without_writes(objs: Vec<Value>, says: &[&str]) {
    let sim = Cluster::start(objs).await;
    sim.sim.controllers_idle().await;
    let before = kubectl_state(&sim).await;
    let (code, out) = restart(&sim, &["--yes"]).await;
    assert_eq!(code, 1, "{out}");
    for s in says {
        assert!(out.contains(s), "{s:?} in {out}");
    }
    assert_eq!(kubectl_state(&sim).await, before, "nothing written");
    sim.stop().await;
}

#[tokio::test]
async fn a_running_restore_is_not_restarted_and_nothing_is_written() {
    let mut objs = vm_objects();
    objs.push(old_rj("Running", json!({})));
    // The refusal names the way out: the choice to leave it running.
    refused_without_writes(objs, &["refused", "is Running", "--leave-old-running"]).await;
}

/// A second unfinished restore of vm1, besides the old one.
fn third_rj() -> Value {
    let mut v = rj_manifest("restore-other", json!({"keepOriginalPVC": true}));
    v["metadata"]["uid"] = json!("5c96b3b8-0000-4000-8000-000000000003");
    v["status"] = json!({"phase": "Running"});
    v
}

#[tokio::test]
async fn leaving_the_old_restore_running_accepts_only_that_restore_and_every_other_refusal_holds() {
    // Left running, the preflight still refuses a new restore that keeps no copy.
    let mut objs = vm_objects();
    objs.push(old_rj("Running", json!({"keepOriginalPVC": false})));
    let sim = Cluster::start(objs).await;
    sim.sim.controllers_idle().await;
    let before = kubectl_state(&sim).await;
    let (code, out) = restart(&sim, &["--leave-old-running", "--yes"]).await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("is not clean") && out.contains("keep-original-disabled"),
        "{out}"
    );
    assert!(
        !out.contains("concurrent-restores"),
        "the chosen one is accepted: {out}"
    );
    assert_eq!(kubectl_state(&sim).await, before, "nothing written");
    sim.stop().await;

    // A third restore of the same application running: leaving the old one does not cover it.
    let mut objs = vm_objects();
    objs.push(old_rj("Running", json!({"keepOriginalPVC": true})));
    objs.push(third_rj());
    let sim = Cluster::start(objs).await;
    sim.sim.controllers_idle().await;
    let before = kubectl_state(&sim).await;
    let (code, out) = restart(&sim, &["--leave-old-running", "--yes"]).await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("concurrent-restores: 3 restores run at once on VMInstance vm1 in tenant-a: restore-other"),
        "{out}"
    );
    assert_eq!(kubectl_state(&sim).await, before, "nothing written");
    sim.stop().await;
}

#[tokio::test]
async fn leave_old_running_is_refused_as_usage_on_another_action() {
    let sim = Cluster::start(vm_objects()).await;
    let (code, out, err) = sim
        .run(
            &[
                "action",
                "resume-release",
                "tenant-a/restore-test",
                "--leave-old-running",
            ],
            None,
        )
        .await;
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("--leave-old-running applies to restart-restore"),
        "{err}"
    );
    sim.stop().await;
}

#[tokio::test]
async fn a_running_restore_left_running_by_choice_is_restarted_once_and_a_rerun_changes_nothing() {
    let mut objs = vm_objects();
    objs.push(old_rj("Running", json!({"keepOriginalPVC": true})));
    let sim = Cluster::start(objs).await;
    sim.sim.controllers_idle().await;

    // The plan says plainly what leaving it means; a dry run writes nothing.
    let before = kubectl_state(&sim).await;
    let (code, out) = restart(&sim, &["--leave-old-running"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("create RestoreJob tenant-a/restore-test-r2"),
        "{out}"
    );
    assert!(
        out.contains("you chose to leave RestoreJob restore-test running (Running): two restores of VMInstance vm1 will run at once; a controller before the fixes does not lock them against each other")
            && out.contains("a newer one fails the new RestoreJob (ConcurrentRestore) while the old one runs"),
        "{out}"
    );
    assert_eq!(
        kubectl_state(&sim).await,
        before,
        "a dry run writes nothing"
    );

    let (code, out) = restart(&sim, &["--leave-old-running", "--yes"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("done: 1 writes"), "{out}");
    // A fresh read of what was written: the new RestoreJob, and the old one untouched.
    let created = sim
        .sim
        .store()
        .get(Kind::RestoreJob, NS, "restore-test-r2")
        .expect("the new RestoreJob exists");
    assert_eq!(
        created["spec"],
        rj_manifest("restore-test", json!({"keepOriginalPVC": true}))["spec"]
    );
    assert_eq!(
        created["metadata"]["annotations"]["restorewatch.io/restarted-from"],
        "5c96b3b8-0000-4000-8000-000000000001"
    );
    let (_, phases, _) = sim
        .kubectl(&[
            "get",
            "restorejobs",
            "-n",
            NS,
            "-o",
            "jsonpath={range .items[*]}{.metadata.name}={.status.phase};{end}",
        ])
        .await;
    assert!(
        phases.contains("restore-test=Running;"),
        "the old one still runs: {phases}"
    );
    let (_, events, _) = sim
        .kubectl(&[
            "get",
            "events",
            "-n",
            NS,
            "-o",
            "jsonpath={.items[*].reason}",
        ])
        .await;
    assert!(events.contains("RestorewatchAction"), "{events}");

    // A rerun, with or without the choice, finds the restart done and writes nothing.
    let rv = sim.sim.store().current_rv();
    for extra in [&["--leave-old-running", "--yes"][..], &["--yes"][..]] {
        let (code, out) = restart(&sim, extra).await;
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("already restarted as RestoreJob tenant-a/restore-test-r2"),
            "{out}"
        );
    }
    assert_eq!(sim.sim.store().current_rv(), rv, "a rerun writes nothing");
    sim.stop().await;
}

#[tokio::test]
async fn a_restart_whose_preflight_is_not_clean_is_refused_and_nothing_is_written() {
    // keepOriginalPVC false: the new restore would replace the disk without a copy.
    let mut objs = vm_objects();
    objs.push(old_rj("Failed", json!({"keepOriginalPVC": false})));
    refused_without_writes(
        objs,
        &[
            "preflight of a new RestoreJob restore-test-r2 is not clean",
            "keep-original-disabled",
        ],
    )
    .await;
}

#[tokio::test]
async fn a_failed_restore_is_restarted_under_a_free_name_once_and_a_rerun_changes_nothing() {
    let mut objs = vm_objects();
    objs.push(old_rj("Failed", json!({"keepOriginalPVC": true})));
    // The old name's -orig is taken (why it failed), and so is the first candidate's.
    objs.push(foreign_orig("vm-disk-data-orig-de3e", Some(DELETED_UID)));
    let r2_orig = orig_pvc_name("vm-disk-data", "restore-test-r2");
    objs.push(foreign_orig(&r2_orig, Some(DELETED_UID)));
    let sim = Cluster::start(objs).await;
    sim.sim.controllers_idle().await;

    // Without --yes: the plan, with why this name and the preflight, and nothing written.
    let before = kubectl_state(&sim).await;
    let (code, out) = restart(&sim, &[]).await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("create RestoreJob tenant-a/restore-test-r3"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "name restore-test-r3: no RestoreJob has it, its hash {}",
            short_hash("restore-test-r3")
        )) && out.contains("passed over: restore-test-r2 (orig-pvc-foreign)"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "preflight: vm-disk-data kept as {}",
            orig_pvc_name("vm-disk-data", "restore-test-r3")
        )),
        "{out}"
    );
    assert_eq!(
        kubectl_state(&sim).await,
        before,
        "a dry run writes nothing"
    );

    let (code, out) = restart(&sim, &["--yes"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("done: 1 writes"), "{out}");
    let created = sim
        .sim
        .store()
        .get(Kind::RestoreJob, NS, "restore-test-r3")
        .expect("the new RestoreJob exists");
    assert_eq!(
        created["spec"],
        rj_manifest("restore-test", json!({"keepOriginalPVC": true}))["spec"]
    );
    assert_eq!(
        created["metadata"]["annotations"]["restorewatch.io/restarted-from"],
        "5c96b3b8-0000-4000-8000-000000000001"
    );
    // Written under restorewatch's own field manager (never `unknown`), the Event too.
    assert_eq!(
        created["metadata"]["managedFields"][0]["manager"], "restorewatch",
        "{created}"
    );
    let (_, managers, _) = sim
        .kubectl(&[
            "get",
            "events",
            "-n",
            NS,
            "--show-managed-fields",
            "-o",
            "jsonpath={.items[*].metadata.managedFields[*].manager}",
        ])
        .await;
    assert!(
        managers.split_whitespace().all(|m| m == "restorewatch") && !managers.is_empty(),
        "{managers}"
    );
    let (_, events, _) = sim
        .kubectl(&[
            "get",
            "events",
            "-n",
            NS,
            "-o",
            "jsonpath={.items[*].reason}",
        ])
        .await;
    assert!(events.contains("RestorewatchAction"), "{events}");

    // A rerun finds the restart done: nothing more is created.
    let rv = sim.sim.store().current_rv();
    let (code, out) = restart(&sim, &["--yes"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("already restarted as RestoreJob tenant-a/restore-test-r3"),
        "{out}"
    );
    assert_eq!(sim.sim.store().current_rv(), rv, "a rerun writes nothing");
    sim.stop().await;
}

#[tokio::test]
async fn a_user_who_may_not_create_restorejobs_is_told_before_anything_is_written() {
    let mut objs = vm_objects();
    objs.push(old_rj("Failed", json!({})));
    let read_and_review = vec![
        restorewatch::sim::Rule {
            verbs: vec!["get".into(), "list".into(), "watch".into()],
            resources: vec!["*".into()],
            namespaces: vec![],
        },
        restorewatch::sim::Rule {
            verbs: vec!["create".into()],
            resources: vec!["selfsubjectaccessreviews".into()],
            namespaces: vec![],
        },
    ];
    let sim = Cluster::start_as(read_and_review, objs).await;
    sim.sim.controllers_idle().await;
    let rv = sim.sim.store().current_rv();
    let (code, out) = restart(&sim, &["--yes"]).await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("forbidden: no create on restorejobs in tenant-a"),
        "{out}"
    );
    assert_eq!(sim.sim.store().current_rv(), rv, "nothing written");
    sim.stop().await;
}

/// A failed restore whose Velero Backup has since expired (or is gone): restarting it would
/// halt, rename and delete, then wait forever on Velero's `FailedValidation` (dumps 13-*). The
/// restart's preflight reads Velero's Backups as `preflight` does, and refuses.
#[tokio::test]
async fn a_restore_whose_velero_backup_expired_or_is_gone_is_not_restarted() {
    for expiration in [Some("2020-01-01T00:00:00Z"), None] {
        let mut objs = vm_objects_with_velero_backup(expiration);
        let mut old = old_rj("Failed", json!({"keepOriginalPVC": true}));
        old["status"]["message"] = json!("Velero Restore failed with phase: Failed");
        objs.push(old);
        refused_without_writes(objs, &["velero-backup-missing"]).await;
    }
}
