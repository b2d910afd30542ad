//! Credentials written while restorewatch watches: a container env entry named like a
//! credential, a URL's `user:password@`, a DSN in a parameter. They reach neither the history
//! pane nor the report (the dashboard's data, `serve`'s `/report`); `serve --no-report` turns
//! `/report` off for clusters that want only metrics.

mod common;
mod serve_support;

use common::{press, render};
use crossterm::event::KeyCode;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use restorewatch::analysis::HistoryWhat;
use restorewatch::ui::app::{App, Screen};
use restorewatch::ui::{Msg, update};
use serde_json::json;
use serve_support::{get, start_serve};
use std::time::{Duration, Instant};

const SECRETS: [&str; 6] = [
    "LIVE-env-1",
    "LIVE-env-2",
    "LIVE-url-1",
    "LIVE-url-2",
    "LIVE-dsn-1",
    "LIVE-dsn-2",
];

/// Two writes of the CNPG Cluster, each with credentials where operators put them, and a
/// visible change beside them (`spec.instances` 3, then 4).
async fn write_credentials(client: kube::Client) {
    let ar = ApiResource {
        group: "postgresql.cnpg.io".into(),
        version: "v1".into(),
        api_version: "postgresql.cnpg.io/v1".into(),
        kind: "Cluster".into(),
        plural: "clusters".into(),
    };
    let clusters: Api<DynamicObject> = Api::namespaced_with(client, "tenant-b", &ar);
    for (i, instances) in [(1, 3), (2, 4)] {
        clusters
            .patch(
                "postgres-pg1",
                &PatchParams {
                    field_manager: Some("an-operator".into()),
                    ..PatchParams::default()
                },
                &Patch::Merge(json!({"spec": {
                    "instances": instances,
                    "env": [{"name": "DB_PASSWORD", "value": format!("LIVE-env-{i}")},
                            {"name": "TZ", "value": "UTC"}],
                    "externalClusters": [{"name": "origin",
                        "connectionString": format!("postgres://app:LIVE-url-{i}@origin:5432/app")}],
                    "postgresql": {"parameters": {
                        "primary_conninfo": format!("host=origin user=r password=LIVE-dsn-{i}")}}
                }})),
            )
            .await
            .expect("the Cluster is patched");
    }
}

fn assert_hidden(place: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{place} shows {s}:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_written_live_reach_neither_the_history_pane_nor_the_report() {
    let sim = common::sim_played("pg-servername-reverted").await;
    let client = sim.client().expect("client");
    let source = common::watch_everything(client.clone());
    let mut frames = source.frames.clone();
    common::wait_frame(
        &mut frames,
        20,
        "a first frame",
        |_| true,
        |_| String::new(),
    )
    .await;
    write_credentials(client).await;
    let f = common::wait_frame(
        &mut frames,
        20,
        "the instances change",
        |f| {
            f.report.restores.iter().any(|r| {
                r.history.iter().any(|h| {
                    matches!(&h.what, HistoryWhat::Change { path, to, .. }
                        if &**path == "spec.instances" && to.as_deref() == Some("4"))
                })
            })
        },
        |_| String::new(),
    )
    .await;
    assert_hidden(
        "the report",
        &restorewatch::document::check_json::json(&f.report),
    );

    // The history pane, drawn: every pane of the restore's detail.
    let mut a = App::new(common::ui_data::options(), f.analyzed_at, (160, 80));
    update(&mut a, Msg::Frame(Some(f.clone())));
    press(&mut a, KeyCode::Enter);
    assert!(matches!(a.screen, Screen::Detail(_)));
    for pane in 0..5 {
        assert_hidden(&format!("detail pane {pane}"), &render(&a));
        press(&mut a, KeyCode::Tab);
    }
    press(&mut a, KeyCode::Char('h'));
    let history = render(&a);
    assert_hidden("the history pane", &history);
    let saw_history = history.contains("spec.instances");
    assert!(saw_history, "the history pane was drawn with the change");
    drop(source);
    sim.shutdown().await;
}

fn wait_report(addr: &str, want: &str) -> String {
    let start = Instant::now();
    loop {
        if let Some((200, body)) = get(addr, "/report")
            && body.contains(want)
        {
            return body;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no /report with {want}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_report_carries_no_credential_and_no_report_turns_it_off() {
    let sim = common::sim_played("pg-servername-reverted").await;
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).unwrap();
    let serve = start_serve(&kc, &[], &[]);
    let addr = serve.addr.clone();
    tokio::task::spawn_blocking(move || wait_report(&addr, "restore-pg1"))
        .await
        .unwrap();
    write_credentials(sim.client().unwrap()).await;
    let addr = serve.addr.clone();
    let body = tokio::task::spawn_blocking(move || wait_report(&addr, "\"spec.instances\""))
        .await
        .unwrap();
    assert_hidden("/report", &body);

    let quiet = start_serve(&kc, &["--no-report"], &[]);
    let addr = quiet.addr.clone();
    let (report, metrics) =
        tokio::task::spawn_blocking(move || (get(&addr, "/report"), get(&addr, "/metrics")))
            .await
            .unwrap();
    let (code, body) = report.expect("an answer");
    assert_eq!(code, 404, "{body}");
    assert!(body.contains("--no-report"), "{body}");
    assert_eq!(metrics.map(|m| m.0), Some(200));
    sim.shutdown().await;
}
