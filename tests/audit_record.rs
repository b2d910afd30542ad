//! The audit log as its readers meet it: one record per line whatever a server's message holds,
//! and the identity the API server authenticated beside the kubeconfig's user name.

mod actions_support;

use actions_support::*;
use restorewatch::actions::audit::{self, AuditLine, Identity};
use restorewatch::actions::execute::{Executor, Outcome};
use restorewatch::sim::{Policy, Sim, SimConfig};
use serde_json::Value;

fn line_with(outcome: &str) -> AuditLine {
    AuditLine {
        time: "2026-01-01T00:00:00Z".into(),
        user: "kubeconfig-user".into(),
        authenticated: Identity::Unknown {
            unknown: "not asked".into(),
        },
        context: "ctx".into(),
        server: "https://a.example:6443".into(),
        kube_system_uid: None,
        restore_uid: String::new(),
        action: "resume-rename".into(),
        target: "tenant-a/restore-1".into(),
        operation: "patch".into(),
        precondition: "resourceVersion 1".into(),
        outcome: outcome.into(),
    }
}

#[test]
fn unicode_line_separators_in_a_message_do_not_cut_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let hostile = "failed: a\u{2028}b\u{2029}c\u{85}d";
    audit::append(&path, &line_with(hostile)).unwrap();
    audit::append(&path, &line_with("done")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    for sep in ['\u{2028}', '\u{2029}', '\u{85}'] {
        assert!(!text.contains(sep), "raw {sep:?} in {text:?}");
    }
    // What a reader that splits on every Unicode line break sees: still two whole records.
    let records: Vec<&str> = text
        .split(['\n', '\u{2028}', '\u{2029}', '\u{85}'])
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(records.len(), 2, "{text:?}");
    let first: Value = serde_json::from_str(records[0]).unwrap();
    assert_eq!(
        first["outcome"], hostile,
        "the escapes decode to the message"
    );
}

const ALICE_TOKEN: &str = "alice-token";

async fn sim_with_alice() -> restorewatch::sim::SimHandle {
    let mut cfg = SimConfig::default().with_pv_resync(std::time::Duration::from_millis(50));
    let mut alice = Policy::builtin("admin").unwrap();
    alice.user = "alice@example.com".into();
    cfg.tokens.insert(ALICE_TOKEN.into(), alice);
    let sim = Sim::start(cfg).await.unwrap();
    for o in rename_state("orig-created") {
        sim.store().load(o).unwrap();
    }
    sim
}

#[tokio::test]
async fn the_audit_records_who_the_server_authenticated_beside_the_kubeconfig_user() {
    let sim = sim_with_alice().await;
    let client = sim.client_with_token(ALICE_TOKEN).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let ex = Executor {
        user: "admin-entry".into(),
        audit: Some(path.clone()),
        ..executor(&client, None)
    };
    let plan = plan_ok(&client, &rename_req()).await;
    let Outcome::Completed { writes } = ex.execute(&plan, |_| {}).await else {
        panic!("must complete")
    };
    assert!(writes > 0);
    let lines = audit_lines(&path);
    assert_eq!(lines.len(), writes);
    for l in &lines {
        assert_eq!(l["user"], "admin-entry", "{l}");
        assert_eq!(l["authenticated"]["user"], "alice@example.com", "{l}");
        assert_eq!(l["authenticated"]["groups"][0], "system:authenticated");
    }
    sim.shutdown().await;
}

#[tokio::test]
async fn a_refused_review_is_recorded_as_unknown_not_guessed() {
    let sim = sim_with_alice().await;
    // A token the server does not know: the review is refused (401).
    let client = sim.client_with_token("not-a-token").unwrap();
    match audit::authenticated_identity(&client).await {
        Identity::Unknown { unknown } => assert!(unknown.contains("401"), "{unknown}"),
        known => panic!("guessed {known:?}"),
    }
    sim.shutdown().await;
}
