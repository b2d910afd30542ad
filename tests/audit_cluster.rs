//! The report credits restorewatch's own actions only to the restore and the cluster they were
//! made on, and only up to the report's "now": the real binary's `report` on a dump (`--now`)
//! and on a live emulator, with an audit log holding this restore's line beside another
//! cluster's (same context name, same namespace/name), a later one, and a line from before the
//! cluster was recorded. And the executor records the cluster and the RestoreJob UID.

mod actions_support;

use actions_support::*;
use restorewatch::actions::execute::Executor;
use serde_json::{Value, json};
use std::path::Path;

const OTHER_RJ_UID: &str = "99999999-0000-4000-8000-000000000999";

fn line(op: &str, time: &str, server: Option<&str>, restore_uid: Option<&str>) -> Value {
    let mut l = json!({"time": time, "user": "kubeconfig-entry", "context": "prod",
        "action": "resume-rename", "target": "RestoreJob tenant-a/restore-test",
        "operation": op, "precondition": "none", "outcome": "done",
        "authenticated": {"user": "alice@example.com", "groups": ["system:authenticated"]}});
    if let Some(s) = server {
        l["server"] = json!(s);
        l["kube_system_uid"] = Value::Null;
    }
    if let Some(u) = restore_uid {
        l["restore_uid"] = json!(u);
    }
    l
}

fn write_audit(state: &Path, lines: &[Value]) {
    let dir = state.join("restorewatch");
    std::fs::create_dir_all(&dir).expect("state");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("audit.jsonl"), text).expect("audit");
}

fn report(state: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .arg("report")
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_report_on_a_dump_credits_this_restores_lines_up_to_its_now_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("dump.json");
    let items: Vec<Value> = base_objects("Failed");
    std::fs::write(
        &dump,
        json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string(),
    )
    .expect("dump");
    write_audit(
        dir.path(),
        &[
            line(
                "OP-OURS",
                "2026-11-20T10:10:00Z",
                Some("https://b.example:6443"),
                Some(RJ_UID),
            ),
            line(
                "OP-OTHER-CLUSTER",
                "2026-11-20T10:11:00Z",
                Some("https://a.example:6443"),
                Some(OTHER_RJ_UID),
            ),
            line(
                "OP-AFTER-NOW",
                "2026-11-20T10:40:00Z",
                Some("https://b.example:6443"),
                Some(RJ_UID),
            ),
            line("OP-OLD", "2026-11-20T10:12:00Z", None, None),
        ],
    );
    let md = report(
        dir.path(),
        &[
            "tenant-a/restore-test",
            "--snapshot",
            &dump.display().to_string(),
            "--now",
            "2026-11-20T10:30:00Z",
        ],
    );
    assert!(md.contains("OP-OURS"), "{md}");
    assert!(
        md.contains("alice@example.com"),
        "the server's name for the writer:\n{md}"
    );
    for absent in ["OP-OTHER-CLUSTER", "OP-AFTER-NOW", "OP-OLD"] {
        assert!(!md.contains(absent), "{absent} credited:\n{md}");
    }
    assert!(
        md.contains("1 line(s) about this restore's objects do not say which cluster"),
        "{md}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_report_credits_only_its_own_clusters_lines() {
    let (sim, _client) = sim_with(base_objects("Failed")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    write_audit(
        dir.path(),
        &[
            line(
                "OP-OURS",
                "2026-11-20T10:10:00Z",
                Some(&sim.url()),
                Some(RJ_UID),
            ),
            // Another cluster, its context named alike, even one holding a RestoreJob of this UID.
            line(
                "OP-OTHER-CLUSTER",
                "2026-11-20T10:11:00Z",
                Some("https://a.example:6443"),
                Some(RJ_UID),
            ),
            line("OP-OLD", "2026-11-20T10:12:00Z", None, None),
        ],
    );
    let state = dir.path().to_path_buf();
    let kc_arg = kc.display().to_string();
    let md = tokio::task::spawn_blocking(move || {
        report(&state, &["tenant-a/restore-test", "--kubeconfig", &kc_arg])
    })
    .await
    .expect("report");
    assert!(md.contains("OP-OURS"), "{md}");
    assert!(!md.contains("OP-OTHER-CLUSTER"), "{md}");
    assert!(!md.contains("OP-OLD"), "{md}");
    sim.shutdown().await;
}

#[tokio::test]
async fn every_audit_line_records_the_cluster_and_the_restorejob_uid() {
    let mut objs = rename_state("orig-created");
    objs.push(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "kube-system", "uid": "4b5e0000-0000-4000-8000-00000000c1a5"}}));
    let (sim, client) = sim_with(objs).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let ex = Executor {
        audit: Some(path.clone()),
        server: sim.url(),
        ..executor(&client, None)
    };
    let plan = plan_ok(&client, &rename_req()).await;
    let out = ex.execute(&plan, |_| {}).await;
    assert!(out.writes() > 0, "{out:?}");
    for l in audit_lines(&path) {
        assert_eq!(l["server"], sim.url(), "{l}");
        assert_eq!(l["restore_uid"], RJ_UID, "{l}");
        assert_eq!(
            l["kube_system_uid"], "4b5e0000-0000-4000-8000-00000000c1a5",
            "{l}"
        );
    }
    sim.shutdown().await;
}
