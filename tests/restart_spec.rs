//! `restart-restore` on the emulator through the binary (the real kube::Client), read back with
//! kubectl: the new RestoreJob's spec is the old one's exactly, whatever it holds (credential-
//! like option keys, URLs with passwords: issue 27.1), and its name fits every limit even when
//! the old name leaves no room (issue 25: a 64-character name).

mod preflight_support;

use preflight_support::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use restorewatch::analysis::forecast::names::fits;
use serde_json::{Value, json};

const NAME64: &str = "restore-vm-in-place-after-disk-corruption-ticket-4711-2026-12-0x";

fn old_rj(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": name, "namespace": NS, "uid": "5c96b3b8-0000-4000-8000-000000000001",
                     "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": spec,
        "status": {"phase": "Failed", "startedAt": "2026-11-20T10:00:01Z", "completedAt": "2026-11-20T10:00:09Z",
                   "message": "failed to create Velero Restore"}})
}

/// Every RestoreJob of the namespace as the API server holds it, by name.
async fn restore_jobs(sim: &Cluster) -> Vec<Value> {
    let (code, out, err) = sim
        .kubectl(&["get", "restorejobs", "-n", NS, "-o", "json"])
        .await;
    assert_eq!(code, 0, "{err}");
    let list: Value = serde_json::from_str(&out).expect("kubectl JSON");
    list["items"].as_array().cloned().unwrap_or_default()
}

/// Restarts `old` (a Failed RestoreJob with `spec`) and returns the old and the new one as
/// kubectl reads them.
async fn restarted(old: &str, spec: Value) -> (Value, Value, String) {
    let mut objs = vm_objects();
    objs.push(old_rj(old, spec));
    let sim = Cluster::start(objs).await;
    let target = format!("{NS}/{old}");
    let (code, out, err) = sim
        .run(&["action", "restart-restore", &target, "--yes"], None)
        .await;
    let log = format!("{out}{err}");
    assert_eq!(code, 0, "{log}");
    let jobs = restore_jobs(&sim).await;
    sim.stop().await;
    let old_now = jobs
        .iter()
        .find(|j| j["metadata"]["name"] == old)
        .cloned()
        .expect("the old one is still there");
    let new = jobs
        .iter()
        .find(|j| j["metadata"]["name"] != old)
        .cloned()
        .unwrap_or_else(|| panic!("a new RestoreJob: {log}"));
    (old_now, new, log)
}

#[tokio::test]
async fn a_64_character_name_is_restarted_under_a_name_of_at_most_63() {
    let (_, new, log) = restarted(
        NAME64,
        json!({"backupRef": {"name": "vm1-backup"},
               "targetApplicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"}}),
    )
    .await;
    let name = new["metadata"]["name"].as_str().unwrap();
    assert!(name.len() <= 63 && fits(name), "{name}: {log}");
    assert!(name.ends_with("-r2"), "{name}");
    assert!(name.starts_with("restore-vm-in-place-after"), "{name}");
}

/// Option keys a redaction rule may take for credentials, and values that look like secrets.
fn options() -> impl Strategy<Value = serde_json::Map<String, Value>> {
    let key = prop_oneof![
        Just("password".to_string()),
        Just("s3SecretAccessKey".to_string()),
        Just("token".to_string()),
        Just("endpoint".to_string()),
        Just("note".to_string()),
        "[a-z][a-zA-Z]{0,12}",
    ];
    let value = prop_oneof![
        "[ -~]{0,40}".prop_map(Value::from),
        "[a-z]{1,8}".prop_map(|u| Value::from(format!("https://{u}:hunter2@minio.example/bucket"))),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        "[a-z]{1,8}".prop_map(|s| json!({"nested": {"secret": s}})),
    ];
    proptest::collection::btree_map(key, value, 0..6).prop_map(|m| {
        let mut m: serde_json::Map<String, Value> = m.into_iter().collect();
        // keepOriginalPVC is the one option the Velero driver reads here: kept well typed so
        // that the preflight is clean and the restart goes ahead.
        m.insert("keepOriginalPVC".into(), json!(true));
        m
    })
}

/// For any spec, the created RestoreJob's spec equals the old one's: the plan names nothing in
/// the spec to change (only the name and the restarted-from annotation differ).
#[test]
fn the_new_spec_is_the_old_one_exactly_for_any_options() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut runner = TestRunner::new(Config {
        cases: 8,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&options(), |opts| {
            let spec = json!({"backupRef": {"name": "vm1-backup"},
                "targetApplicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
                "options": opts});
            let (old, new, log) = rt.block_on(restarted("restore-test", spec));
            prop_assert_eq!(&new["spec"], &old["spec"], "{}", log);
            prop_assert!(!new["spec"].to_string().contains("redacted"), "{}", new);
            Ok(())
        })
        .expect("every spec copied as it is");
}
