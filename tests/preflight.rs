//! `restorewatch preflight` against the emulator, as an operator runs it before applying a
//! RestoreJob: each prediction on the state that triggers it, and on the nearest state that
//! must not.

mod preflight_support;

use preflight_support::*;
use restorewatch::model::names::{orig_pvc_name, short_hash};
use serde_json::{Value, json};

#[tokio::test]
async fn a_clean_restore_exits_0_says_what_it_keeps_and_prints_the_manifest() {
    let sim = Cluster::start(vm_objects()).await;
    let (code, doc) = sim.preflight_app("restore-2").await;
    assert_eq!(code, 0, "{doc:#}");
    let disk = &doc["disks"][0];
    assert_eq!(disk["disk"], "vm-disk-data");
    assert_eq!(disk["orig"], orig_pvc_name("vm-disk-data", "restore-2"));
    assert_eq!(disk["origState"]["state"], "free");
    assert_eq!(disk["pv"], "pv-data");
    assert_eq!(disk["classPolicy"], "Delete");
    assert_eq!(doc["keptBytes"], 10 * 1024 * 1024 * 1024u64);
    let kept = prediction(&doc, "kept-storage").expect("the kept storage is said");
    assert!(
        kept["message"].as_str().unwrap().contains("10.0 GiB"),
        "{kept}"
    );
    assert_eq!(doc["controller"]["generation"], "unknown");
    assert_eq!(doc["manifest"]["spec"]["backupRef"]["name"], "vm1-backup");
    assert!(codes(&doc).iter().all(|c| c != "orig-pvc-foreign"));
    sim.stop().await;
}

#[tokio::test]
async fn a_taken_orig_name_fails_the_preflight_and_another_name_passes() {
    let mut objs = vm_objects();
    objs.push(foreign_orig("vm-disk-data-orig-de3e", Some(DELETED_UID)));
    let sim = Cluster::start(objs).await;
    // `restore-test` hashes to de3e: the name a deleted RestoreJob of that name left.
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-test", json!({})))
        .await;
    assert_eq!(code, 1, "{doc:#}");
    let p = prediction(&doc, "orig-pvc-foreign").expect("taken name predicted");
    assert_eq!(p["severity"], "error");
    let msg = p["message"].as_str().unwrap();
    assert!(
        msg.contains("a deleted RestoreJob") && msg.contains(DELETED_UID),
        "{msg}"
    );
    assert!(
        msg.contains("unguarded one"),
        "unknown generation says both: {msg}"
    );
    assert_eq!(doc["disks"][0]["origState"]["state"], "taken");
    assert!(
        doc["keptBytes"].is_null() || doc["keptBytes"] == 0,
        "{doc:#}"
    );

    // Near miss: another name maps to another -orig name, which is free.
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["disks"][0]["origState"]["state"], "free");
    sim.stop().await;
}

#[tokio::test]
async fn under_a_guarded_controller_a_taken_name_fails_the_restore_instead_of_losing_the_disk() {
    let mut objs = vm_objects();
    objs.push(foreign_orig("vm-disk-data-orig-de3e", Some(DELETED_UID)));
    // Evidence of the fixed controller: a RestoreJob it failed, naming a taken -orig PVC.
    objs.push(failed_rj_naming("old-restore", "vm-disk-other-orig-1a2b"));
    let sim = Cluster::start(objs).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-test", json!({})))
        .await;
    assert_eq!(doc["controller"]["generation"], "guarded", "{doc:#}");
    // The same finding `check` raises on the RestoreJob once created (one judge), phrased
    // for the guarded controller: nothing is lost, the restore fails before it starts.
    let p = prediction(&doc, "orig-pvc-foreign").expect("taken name predicted");
    assert_eq!(p["severity"], "error");
    assert!(
        p["message"]
            .as_str()
            .unwrap()
            .contains("fails the RestoreJob before it suspends or halts anything"),
        "{p}"
    );
    let failed = prediction(&doc, "restore-failed").expect("the refusal predicted");
    assert_eq!(failed["step"], "validate", "{failed}");
    assert!(
        doc["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["step"] != "halt-vm"),
        "nothing halted: {doc:#}"
    );
    assert_eq!(code, 1, "{doc:#}");
    // The text says the generation and its evidence.
    let (_, text) = sim
        .preflight_text(&rj_manifest("restore-test", json!({})))
        .await;
    assert!(
        text.contains("controller: guarded (evidence: RestoreJob tenant-a/old-restore failed naming -orig PVC vm-disk-other-orig-1a2b"),
        "{text}"
    );
    sim.stop().await;
}

#[tokio::test]
async fn a_predecessors_velero_restore_would_fake_success() {
    let mut objs = vm_objects();
    objs.push(velero_restore(
        "tenant-a.restore-test-x7k2p",
        "restore-test",
        NS,
    ));
    objs.push(velero_restore(
        "tenant-b.restore-2-abcde",
        "restore-2",
        "tenant-b",
    ));
    let sim = Cluster::start(objs).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-test", json!({})))
        .await;
    assert_eq!(code, 1, "{doc:#}");
    let p = prediction(&doc, "velero-restore-stale").expect("predecessor found");
    assert!(
        p["message"]
            .as_str()
            .unwrap()
            .contains("tenant-a.restore-test-x7k2p"),
        "{p}"
    );
    // Near miss: a Restore of the same RestoreJob name in another namespace is not this one's.
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    assert_eq!(code, 0, "{doc:#}");
    assert!(
        prediction(&doc, "velero-restore-stale").is_none(),
        "{doc:#}"
    );
    sim.stop().await;
}

#[tokio::test]
async fn an_orig_name_past_253_characters_is_caught_and_one_at_253_is_not() {
    // `<disk>-orig-<hash>` adds 10 characters.
    let long = format!("vm-disk-{}", "x".repeat(236));
    let fits = format!("vm-disk-{}", "y".repeat(235));
    let mut objs = vm_objects();
    objs[2] = backup_with_disks(&[&long, &fits]);
    let sim = Cluster::start(objs).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    assert_eq!(code, 1, "{doc:#}");
    let too_long: Vec<&Value> = doc["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["code"] == "orig-name-too-long")
        .collect();
    assert_eq!(too_long.len(), 1, "only the 254-character name: {doc:#}");
    assert!(
        too_long[0]["message"]
            .as_str()
            .unwrap()
            .contains("254 characters")
    );
    assert_eq!(doc["disks"][1]["origState"]["state"], "free");
    sim.stop().await;
}

#[tokio::test]
async fn a_running_restore_whose_name_hashes_the_same_collides_only_while_it_runs() {
    let twin = (0..)
        .map(|i| format!("rj-{i}"))
        .find(|n| short_hash(n) == short_hash("restore-2"))
        .expect("a colliding name exists");
    let mut objs = vm_objects();
    objs.push(live_rj(&twin, "Running"));
    let sim = Cluster::start(objs).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    assert_eq!(code, 1, "{doc:#}");
    let p = prediction(&doc, "orig-hash-collision").expect("collision predicted");
    assert!(p["message"].as_str().unwrap().contains(&twin), "{p}");
    sim.stop().await;

    // Near miss: the same twin, finished, renames nothing any more.
    let mut objs = vm_objects();
    objs.push(live_rj(&twin, "Succeeded"));
    let sim = Cluster::start(objs).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    assert_eq!(code, 0, "{doc:#}");
    // check still warns that the two share a hash (its rule, not an error): so does preflight.
    assert!(
        prediction(&doc, "orig-hash-collision").is_none_or(|p| p["severity"] == "warning"),
        "{doc:#}"
    );
    sim.stop().await;
}

#[tokio::test]
async fn a_running_vm_is_said_to_be_halted_and_keep_original_false_loses_the_disks() {
    let mut objs = vm_objects();
    objs.push(vmi());
    let sim = Cluster::start(objs).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({"keepOriginalPVC": false})))
        .await;
    // keep-original-disabled with check's severity (a warning: the operator chose it).
    assert_eq!(code, 0, "{doc:#}");
    let halt = prediction(&doc, "vm-will-halt").expect("halt said");
    assert_eq!(halt["severity"], "info");
    let keep = prediction(&doc, "keep-original-disabled").expect("loss said");
    assert_eq!(keep["severity"], "warning");
    assert!(keep["message"].as_str().unwrap().contains("vm-disk-data"));
    sim.stop().await;

    // Near miss: no VMI (the VM is stopped), keepOriginalPVC true.
    let sim = Cluster::start(vm_objects()).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({"keepOriginalPVC": true})))
        .await;
    assert_eq!(code, 0, "{doc:#}");
    assert!(prediction(&doc, "vm-will-halt").is_none());
    assert!(prediction(&doc, "keep-original-disabled").is_none());
    sim.stop().await;
}

#[tokio::test]
async fn postgres_store_ownership_archive_prefix_and_deadline_are_predicted() {
    // Healthy: the ObjectStore is the live Cluster's, the archive prefix differs from the one
    // recovered from, and the deadline is the one asked for.
    let sim = Cluster::start(pg_objects(CLUSTER_UID, "postgres-orders-2")).await;
    let (code, doc) = sim
        .preflight_file(&pg_manifest(json!({"restoreTimeoutSeconds": 600})))
        .await;
    assert_eq!(code, 0, "{doc:#}");
    let d = prediction(&doc, "restore-deadline").expect("deadline said");
    assert!(d["message"].as_str().unwrap().contains("within 10m"), "{d}");
    assert!(prediction(&doc, "new-server-name").is_some());
    assert!(prediction(&doc, "objectstore-owner-stale").is_none());
    assert!(prediction(&doc, "archive-prefix-shared").is_none());
    sim.stop().await;

    // Hits: the ObjectStore is owned by a purged Cluster (caught before the garbage collector
    // removes it), the archive is the recovery prefix, and the deadline is the default.
    let purged = "dead0000-0000-4000-8000-000000000000";
    let sim = Cluster::start_still(pg_objects(purged, "postgres-orders")).await;
    let (code, doc) = sim.preflight_file(&pg_manifest(json!({}))).await;
    assert_eq!(code, 1, "{doc:#}");
    let o = prediction(&doc, "objectstore-owner-stale").expect("stale owner");
    assert!(o["message"].as_str().unwrap().contains(CLUSTER_UID), "{o}");
    assert!(
        prediction(&doc, "archive-prefix-shared").is_some(),
        "{doc:#}"
    );
    let d = prediction(&doc, "restore-deadline").expect("deadline said");
    assert!(d["message"].as_str().unwrap().contains("within 30m"), "{d}");
    sim.stop().await;

    // With the garbage collector on, such an ObjectStore is gone within a second: missing.
    let sim = Cluster::start(pg_objects(purged, "postgres-orders-2")).await;
    sim.sim.controllers_idle().await;
    let (code, doc) = sim.preflight_file(&pg_manifest(json!({}))).await;
    assert_eq!(code, 1, "{doc:#}");
    assert!(prediction(&doc, "objectstore-missing").is_some(), "{doc:#}");
    sim.stop().await;
}

#[tokio::test]
async fn a_missing_backup_or_an_unreadable_kind_means_cannot_tell() {
    let mut objs = vm_objects();
    objs.remove(2);
    let sim = Cluster::start(objs).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    assert_eq!(code, 2, "{doc:#}");
    assert!(
        doc["unknown"][0]
            .as_str()
            .unwrap()
            .contains("Backup tenant-a/vm1-backup is not there"),
        "{doc:#}"
    );
    sim.stop().await;

    // May list everything but PVCs: whether the -orig names are free is unknown.
    let sim = Cluster::start_without_pvcs(vm_objects()).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    assert_eq!(code, 2, "{doc:#}");
    assert_eq!(doc["disks"][0]["origState"]["state"], "unknown", "{doc:#}");
    assert!(
        doc["unknown"].as_array().unwrap().iter().any(|u| u
            .as_str()
            .unwrap()
            .contains("persistentvolumeclaims could not be read")),
        "{doc:#}"
    );
    sim.stop().await;
}

#[tokio::test]
async fn a_finished_restore_of_the_same_name_is_said_and_restart_restore_offered() {
    let mut objs = vm_objects();
    objs.push(live_rj("restore-2", "Failed"));
    let sim = Cluster::start(objs).await;
    let (_, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    let p = prediction(&doc, "restore-job-exists").expect("the finished RestoreJob is said");
    assert_eq!(p["action"], "restart-restore", "{p}");
    assert!(p["message"].as_str().unwrap().contains("is Failed"), "{p}");
    assert_eq!(doc["exists"], true);
    // Near miss: a running one is resumed by the controller, nothing to restart.
    sim.stop().await;
    let mut objs = vm_objects();
    objs.push(live_rj("restore-2", "Running"));
    let sim = Cluster::start(objs).await;
    let (_, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    assert!(prediction(&doc, "restore-job-exists").is_none(), "{doc:#}");
    assert_eq!(
        prediction(&doc, "restore-job-running").expect("resumed")["severity"],
        "info"
    );
    sim.stop().await;
}
