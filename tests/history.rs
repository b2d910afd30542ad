//! Each restore's history: what an on-call engineer needs to tell *who* broke a restore. On a
//! dump (`--show-managed-fields`) it holds the Events and each object's field managers; live,
//! also every field the watch saw change, with the writer, as report 003 was diagnosed.

mod common;

use restorewatch::analysis::{HistoryEntry, HistoryWhat};
use restorewatch::pipeline::{Frame, FrameRx};
use restorewatch::sim::{Scenario, Sim, SimConfig};
use serde_json::Value;
use std::process::Command;
use std::sync::Arc;

const DUMP: &str = "tests/fixtures/history/servername-reverted-managed-fields.yaml";

fn check_json(file: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(["check", "--snapshot", file, "--now", "2026-11-20T10:05:00Z"])
        .args(["-o", "json", "--fail-on", "never"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("restorewatch runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

#[test]
fn check_json_tells_who_wrote_the_cluster_from_a_dump_with_managed_fields() {
    let doc = check_json(DUMP);
    let restore = &doc["restores"][0];
    assert_eq!(restore["name"], "restore-orders");
    let history = restore["history"].as_array().expect("a history array");
    let times: Vec<&str> = history
        .iter()
        .map(|h| h["time"].as_str().unwrap_or(""))
        .collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted, "oldest first");

    let writer = |manager: &str| {
        history
            .iter()
            .find(|h| {
                h["source"] == "managedFields"
                    && h["object"] == "Cluster/tenant-a/postgres-orders"
                    && h["manager"] == manager
                    && h["subresource"].is_null()
            })
            .unwrap_or_else(|| panic!("no {manager} entry on the Cluster: {history:#?}"))
    };
    let helm = writer("helm-controller");
    let driver = writer("cozystack-cnpg-backup-driver");
    assert_eq!(helm["operation"], "Apply");
    assert_eq!(helm["time"], "2026-11-20T10:00:45Z");
    assert_eq!(driver["operation"], "Apply");
    assert_eq!(driver["time"], "2026-11-20T10:00:49Z");
    // The driver owns the plugins now: it wrote the serverName last.
    assert_eq!(driver["fields"], serde_json::json!(["spec.plugins"]));
    let pos = |h: &Value| history.iter().position(|x| x == h);
    assert!(pos(helm) < pos(driver), "the chart rendered first");

    let status = history
        .iter()
        .find(|h| h["object"] == "Cluster/tenant-a/postgres-orders" && h["manager"] == "manager")
        .expect("CNPG's status writer");
    assert_eq!(status["subresource"], "status");
    assert!(
        status["fields"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == "status.phase"))
    );

    let events: Vec<&Value> = history.iter().filter(|h| h["source"] == "event").collect();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[1]["reason"], "TargetPurged");
    assert_eq!(events[1]["object"], "RestoreJob/tenant-a/restore-orders");
    // A dump holds no watch: no changes, and a Backup's passwords never show.
    assert!(history.iter().all(|h| h["source"] != "change"));
    assert!(!doc.to_string().contains("fixture-secret-do-not-display"));
}

async fn wait_for(
    frames: &mut FrameRx,
    secs: u64,
    what: &str,
    want: impl Fn(&Frame) -> bool,
) -> Arc<Frame> {
    common::wait_frame(frames, secs, what, want, |last| {
        let histories = last.map(|f| {
            f.report
                .restores
                .iter()
                .map(|r| (r.id.to_string(), r.history.clone()))
                .collect::<Vec<_>>()
        });
        format!("histories: {histories:#?}")
    })
    .await
}

fn history_of<'a>(f: &'a Frame, name: &str) -> &'a [HistoryEntry] {
    f.report
        .restores
        .iter()
        .find(|r| r.id.name == name)
        .map_or(&[], |r| r.history.as_slice())
}

fn server_name_change(h: &HistoryEntry) -> Option<(&str, &str, &str)> {
    match &h.what {
        HistoryWhat::Change {
            path,
            from,
            to,
            manager,
            ..
        } if &**path == "spec.plugins[0].parameters.serverName"
            && h.object.to_string() == "Cluster/tenant-b/postgres-pg1" =>
        {
            Some((
                from.as_deref().unwrap_or("-"),
                to.as_deref().unwrap_or("-"),
                manager.as_deref().unwrap_or("-"),
            ))
        }
        _ => None,
    }
}

/// Report 003 played by the emulator: the chart renders the Cluster with the new serverName,
/// then the backup driver writes the old one back. The live history shows that write with
/// both values and the driver's name, after the chart's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_history_shows_the_server_name_revert_and_its_writer() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let source = common::watch_everything(sim.client().expect("client"));
    let mut frames = source.frames.clone();
    wait_for(&mut frames, 20, "a first frame", |_| true).await;
    let run = sim.play(
        Scenario::load("pg-servername-reverted").expect("built-in"),
        4.0,
    );
    let collected = |h: &HistoryEntry| {
        matches!(&h.what, HistoryWhat::Deleted { uid, owners }
            if h.object.to_string() == "ObjectStore/tenant-b/postgres-pg1"
                && uid == "c0de0000-0000-4000-8000-000000000304"
                && owners == &["Cluster/postgres-pg1 c0de0000-0000-4000-8000-000000000101"])
    };
    let f = wait_for(
        &mut frames,
        30,
        "the serverName revert and the collected ObjectStore",
        |f| {
            let h = history_of(f, "restore-pg1");
            h.iter().any(|h| server_name_change(h).is_some()) && h.iter().any(collected)
        },
    )
    .await;
    let history = history_of(&f, "restore-pg1");
    let revert = history
        .iter()
        .find_map(server_name_change)
        .expect("waited for it");
    assert_eq!(
        revert,
        (
            "postgres-pg1-restore-5f3c2a1b9d8e7f60",
            "postgres-pg1",
            "cozystack-cnpg-backup-driver"
        )
    );
    // The chart's render comes first, then the revert: the order of report 003.
    let chart = history.iter().position(|h| {
        h.object.to_string() == "Cluster/tenant-b/postgres-pg1"
            && matches!(&h.what, HistoryWhat::ManagedFields { manager, .. } if &**manager == "helm-controller")
    });
    let revert_at = history.iter().position(|h| server_name_change(h).is_some());
    assert!(chart.is_some(), "helm-controller's entry: {history:#?}");
    assert!(chart < revert_at, "{history:#?}");
    // Before both, the purge: the old Cluster deleted. After the revert, the ObjectStore the
    // same stale read owned by that purged Cluster, taken by the garbage collector.
    let purged = history.iter().position(|h| {
        h.object.to_string() == "Cluster/tenant-b/postgres-pg1"
            && matches!(&h.what, HistoryWhat::Deleted { uid, .. } if uid == "c0de0000-0000-4000-8000-000000000101")
    });
    assert!(purged.is_some() && purged < chart, "{history:#?}");
    assert!(
        history.iter().position(collected) > revert_at,
        "{history:#?}"
    );
    if std::env::var_os("HISTORY_DUMP").is_some() {
        for h in history {
            eprintln!("{}", serde_json::to_string(h).unwrap_or_default());
        }
    }
    assert!(run.finished().await.errors.is_empty());
    drop(source);
    sim.shutdown().await;
}

/// A credential written while the dashboard watches never reaches the history, neither in the
/// pane's data nor in the `/report` JSON, while the change beside it does, with its writer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_changed_live_never_shows_in_the_history() {
    use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
    let sim = common::sim_played("pg-servername-reverted").await;
    let client = sim.client().expect("client");
    let source = common::watch_everything(client.clone());
    let mut frames = source.frames.clone();
    wait_for(&mut frames, 20, "a first frame", |_| true).await;
    let ar = ApiResource {
        group: "apps.cozystack.io".into(),
        version: "v1alpha1".into(),
        api_version: "apps.cozystack.io/v1alpha1".into(),
        kind: "Postgres".into(),
        plural: "postgreses".into(),
    };
    let apps: Api<DynamicObject> = Api::namespaced_with(client, "tenant-b", &ar);
    for (replicas, password) in [(3, "hunter2-before"), (4, "hunter2-after")] {
        apps.patch(
            "pg1",
            &PatchParams {
                field_manager: Some("an-operator".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(serde_json::json!({
                "spec": {"replicas": replicas, "users": {"app": {"password": password}}}
            })),
        )
        .await
        .expect("the app is patched");
    }
    let f = wait_for(&mut frames, 20, "the replicas change", |f| {
        history_of(f, "restore-pg1").iter().any(|h| {
            matches!(&h.what, HistoryWhat::Change { path, to, .. }
                if &**path == "spec.replicas" && to.as_deref() == Some("4"))
        })
    })
    .await;
    let history = history_of(&f, "restore-pg1");
    let replicas = history
        .iter()
        .rev()
        .find_map(|h| match &h.what {
            HistoryWhat::Change { path, manager, .. } if &**path == "spec.replicas" => {
                Some(manager.as_deref())
            }
            _ => None,
        })
        .expect("waited for it");
    assert_eq!(replicas, Some("an-operator"));
    let json = restorewatch::document::check_json::json(&f.report);
    for secret in ["hunter2-before", "hunter2-after"] {
        assert!(!json.contains(secret), "{secret} in the report:\n{json}");
        assert!(
            !format!("{history:?}").contains(secret),
            "{secret} in the history"
        );
    }
    drop(source);
    sim.shutdown().await;
}
