//! One verdict per restore, a function of its findings: `report`'s sentence and `check -o json`
//! (the body `serve` answers `/report` with) say the same, never "healthy" beside a warning
//! that the application is still down, "data lost" only where data is gone, "not restored"
//! where nothing was touched.

use std::process::Command;

fn run(args: &[&str]) -> String {
    let state = tempfile::tempdir().expect("a temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("NO_COLOR", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("restorewatch runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The report's verdict line and the JSON verdict of `tenant-a/restore-test` in `fixture`.
fn verdicts(fixture: &str, now: &str) -> (String, String) {
    let path = format!("tests/fixtures/{fixture}");
    let md = run(&[
        "report",
        "tenant-a/restore-test",
        "--snapshot",
        &path,
        "--now",
        now,
    ]);
    let line = md
        .lines()
        .find(|l| l.starts_with("**Verdict:**"))
        .unwrap_or_else(|| panic!("no verdict in:\n{md}"))
        .to_string();
    let json = run(&["check", "--snapshot", &path, "--now", now, "-o", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).expect("check prints JSON");
    let verdict = doc["restores"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == "restore-test"))
        .and_then(|r| r["verdict"].as_str())
        .unwrap_or_else(|| panic!("no verdict for restore-test in {json}"))
        .to_string();
    (line, verdict)
}

#[test]
fn never_healthy_while_helmreleases_stay_suspended() {
    let (line, json) = verdicts(
        "helmrelease-left-suspended/succeeded-releases-not-restored.yaml",
        "2026-11-20T10:30:00Z",
    );
    assert!(!line.contains("healthy"), "{line}");
    assert!(line.contains("the application is still down"), "{line}");
    assert!(line.contains("helmrelease-left-suspended"), "{line}");
    assert_eq!(json, "app-down");
}

#[test]
fn a_restore_that_touched_nothing_is_not_restored_not_data_lost() {
    for (fixture, now) in [
        (
            "velero-restore-stale/predecessor-completed.yaml",
            "2026-11-20T10:05:00Z",
        ),
        (
            "disk-not-restored/vmdisk-untouched-succeeded.yaml",
            "2026-11-20T10:01:00Z",
        ),
    ] {
        let (line, json) = verdicts(fixture, now);
        assert!(!line.contains("data lost"), "{fixture}: {line}");
        assert!(
            line.contains("not restored") && line.contains("nothing was touched"),
            "{fixture}: {line}"
        );
        assert_eq!(json, "not-restored", "{fixture}");
    }
}

#[test]
fn data_lost_only_where_the_pre_restore_disk_is_gone() {
    // The current disk was not kept and its PVC, still there, was skipped by Velero: nothing
    // was deleted, so the verdict is not "data lost".
    let (line, json) = verdicts(
        "disk-not-kept/prefix-keep-failed.yaml",
        "2026-11-20T10:05:00Z",
    );
    assert!(!line.contains("data lost"), "{line}");
    assert_eq!(json, "needs-attention");
    // Not kept, and the live PVC deleted since (Velero restored a new one): that is lost.
    let (line, json) = verdicts(
        "disk-not-kept/original-deleted-velero-restored.yaml",
        "2026-11-20T10:30:00Z",
    );
    assert!(
        line.contains("data lost") && line.contains("vm-disk-data"),
        "{line}"
    );
    assert_eq!(json, "data-lost");
}

/// A restore by a driver restorewatch does not model (neither Velero nor CNPG) has no step that
/// checks what came back: Succeeded is its only word, never "healthy".
#[test]
fn a_restore_of_an_unmodelled_driver_is_unverified_not_healthy() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let dump = dir.path().join("other-driver.yaml");
    std::fs::write(
        &dump,
        r#"apiVersion: v1
kind: List
items:
- apiVersion: backups.cozystack.io/v1alpha1
  kind: Backup
  metadata: {name: redis1-bk, namespace: tenant-a, uid: b0000000-0000-4000-8000-000000000001, creationTimestamp: "2026-11-20T02:00:00Z"}
  spec:
    applicationRef: {apiGroup: apps.cozystack.io, kind: Redis, name: redis1}
    strategyRef: {apiGroup: strategy.backups.cozystack.io, kind: SomethingElse, name: other}
- apiVersion: backups.cozystack.io/v1alpha1
  kind: RestoreJob
  metadata: {name: restore-test, namespace: tenant-a, uid: 5c96b3b8-0000-4000-8000-000000000009, creationTimestamp: "2026-11-20T10:00:00Z"}
  spec:
    backupRef: {name: redis1-bk}
  status: {phase: Succeeded, startedAt: "2026-11-20T10:00:01Z", completedAt: "2026-11-20T10:05:00Z"}
"#,
    )
    .expect("the dump is written");
    let json = run(&[
        "check",
        "--snapshot",
        dump.to_str().expect("utf-8 path"),
        "--now",
        "2026-11-20T10:30:00Z",
        "-o",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).expect("check prints JSON");
    let r = doc["restores"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == "restore-test"))
        .unwrap_or_else(|| panic!("no restore-test in {json}"));
    assert_eq!(r["driver"], "other", "{r:#}");
    assert_eq!(r["verdict"], "unverified", "{r:#}");
}
