//! `restorewatch action` as an operator runs it against the emulator: what it prints while it
//! waits for the PV controller, what it says on stderr when the Event cannot be recorded, and
//! the only-copy refusal with the flag that overrides it.

mod actions_support;

use actions_support::*;
use restorewatch::model::Kind;
use restorewatch::sim::{Policy, Rule, Sim, SimConfig, SimHandle};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const ORIG_UID: &str = "0e000000-0000-4000-8000-000000000005";

/// Runs the binary on the blocking pool (the emulator answers on this runtime).
async fn rw(kubeconfig: &Path, state: &Path, args: &[&str]) -> (i32, String, String) {
    let mut full: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    full.extend(["--kubeconfig".into(), kubeconfig.display().to_string()]);
    let state = state.to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_restorewatch"))
            .args(&full)
            .env("NO_COLOR", "1")
            .env("XDG_STATE_HOME", &state)
            .output()
    })
    .await
    .expect("task")
    .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn loaded(sim: &SimHandle, objs: Vec<Value>) {
    for o in objs {
        sim.store().load(o).expect("loads");
    }
}

#[tokio::test]
async fn the_cli_shows_that_it_waits_for_the_bind_and_a_rerun_changes_nothing() {
    // The emulator's PV binder binds the -orig PVC on its resync, 1.5 s after the rename.
    let (sim, _client) = awaiting_bind(Duration::from_millis(1500)).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).unwrap();
    let args = [
        "action",
        "resume-rename",
        "--restore",
        "tenant-a/restore-test",
        "--yes",
    ];
    let (code, out, err) = rw(&kc, dir.path(), &args).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("nothing to write"), "{out}");
    assert!(
        out.contains("waiting for the PV controller to bind tenant-a/vm-disk-data-orig-de3e"),
        "{out}"
    );
    assert!(out.contains("done: 0 writes"), "{out}");
    let rv = sim.store().current_rv();
    let (code, out, _) = rw(&kc, dir.path(), &args).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing to do"), "{out}");
    assert_eq!(sim.store().current_rv(), rv, "a rerun writes nothing");
    sim.shutdown().await;
}

#[tokio::test]
async fn the_only_copy_is_refused_by_the_cli_until_discard_only_copy_and_a_lost_event_is_said() {
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
                    resources: vec![
                        "persistentvolumes".into(),
                        "persistentvolumeclaims".into(),
                        "selfsubjectaccessreviews".into(),
                    ],
                    namespaces: vec![],
                },
            ],
        },
    );
    // kubectl sends no token to an http:// server: it reads as the anonymous user.
    cfg.anonymous = Some(Policy::builtin("readonly").expect("readonly"));
    let sim = Sim::start(cfg).await.expect("emulator");
    let mut objs = base_objects("Failed");
    objs.extend([
        restored_pvc(),
        pv("Retain", ORIG, ORIG_UID, Some("Delete")),
        orig_pvc(ORIG_UID, Some(RJ_UID), "Bound"),
    ]);
    loaded(&sim, objs).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, Some("repairer")).unwrap();
    let base = [
        "action",
        "reclaim-orig",
        "--pvc",
        "tenant-a/vm-disk-data-orig-de3e",
        "--yes",
    ];
    let before = kubectl_state(&sim).await;
    let (code, out, err) = rw(&kc, dir.path(), &base).await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("refused")
            && out.contains("may be the only copy")
            && out.contains("--discard-only-copy"),
        "{out}"
    );
    assert_eq!(kubectl_state(&sim).await, before, "nothing written");

    let mut asked = base.to_vec();
    asked.push("--discard-only-copy");
    let (code, out, err) = rw(&kc, dir.path(), &asked).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("discarding it as asked"), "{out}");
    assert!(
        err.contains("the Event on RestoreJob tenant-a/restore-test was not recorded"),
        "said on stderr: {err}"
    );
    assert!(!err.contains("ErrorResponse"), "one line: {err}");
    wait_gone(&sim, NS, ORIG).await;
    let pv = get(&sim, Kind::PersistentVolume, "", "pv-data");
    assert!(
        pv.is_none_or(|p| p["spec"]["persistentVolumeReclaimPolicy"] == "Delete"),
        "the policy was set back before the delete"
    );
    let audit = std::fs::read_to_string(dir.path().join("restorewatch/audit.jsonl")).unwrap();
    assert!(
        audit
            .lines()
            .last()
            .is_some_and(|l| l.contains("record Event") && l.contains("failed")),
        "{audit}"
    );
    sim.shutdown().await;
}

#[path = "common/bulk_data.rs"]
mod bulk_data;

/// Several `--pvc` for reclaim-orig: each planned and run in turn as alone; a dry run by
/// default; the refused are said and untouched; one `--policy` for several is refused.
#[tokio::test]
async fn reclaim_orig_takes_several_pvcs_and_runs_each_as_alone() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    loaded(&sim, bulk_data::objects()).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).unwrap();
    let mut args = vec!["action", "reclaim-orig"];
    for p in [
        "tenant-a/vm-disk-data-orig-de3e",
        "tenant-a/vm-disk-db-orig-de3e",
        "tenant-a/vm-disk-web-orig-de3e",
    ] {
        args.extend(["--pvc", p]);
    }
    let rv = sim.store().current_rv();
    let (code, out, err) = rw(&kc, dir.path(), &args).await;
    assert_eq!(code, 1, "one of them is refused: {out}{err}");
    assert_eq!(out.matches("(dry run: nothing written").count(), 2, "{out}");
    assert!(
        out.contains("PVC tenant-a/vm-disk-db-orig-de3e: refused") && out.contains("forensics"),
        "{out}"
    );
    assert_eq!(sim.store().current_rv(), rv, "a dry run writes nothing");

    let mut with_policy = args.clone();
    with_policy.extend(["--policy", "Delete", "--yes"]);
    let (code, _, err) = rw(&kc, dir.path(), &with_policy).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--policy applies to one PVC"), "{err}");
    assert_eq!(sim.store().current_rv(), rv);

    args.push("--yes");
    let db_before = kubectl(
        &sim,
        &[
            "get",
            "pvc",
            "-n",
            "tenant-a",
            "vm-disk-db-orig-de3e",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ],
    )
    .await;
    let (code, out, err) = rw(&kc, dir.path(), &args).await;
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(out.matches("done: 2 writes").count(), 2, "{out}");
    assert!(
        out.contains("2 of 3 PVCs done, 1 refused or stopped"),
        "{out}"
    );
    for gone in ["vm-disk-data-orig-de3e", "vm-disk-web-orig-de3e"] {
        wait_gone(&sim, "tenant-a", gone).await;
    }
    let db_after = kubectl(
        &sim,
        &[
            "get",
            "pvc",
            "-n",
            "tenant-a",
            "vm-disk-db-orig-de3e",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ],
    )
    .await;
    assert!(!db_before.is_empty());
    assert_eq!(db_before, db_after, "the refused PVC is untouched");
    sim.shutdown().await;
}
