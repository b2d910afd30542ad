//! `restorewatch serve` never looks healthy while it cannot see the cluster: against a server
//! that refuses connections, answers 403 to every list, or accepts and never answers, `/readyz`
//! and `/report` answer 503 saying why and `restorewatch_ready` is 0; a watch that goes down
//! later makes them say "stale" and since when, and the log says so once per watch (and once
//! when it is back) instead of kube's error three times a second.

mod common;

use common::serve::{get, start_serve, wait_until};
use restorewatch::model::KINDS;
use restorewatch::sim::auth::Policy;
use restorewatch::sim::faults::FaultSpec;
use restorewatch::sim::{Sim, SimConfig};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// Starts serve on `kubeconfig` and checks that, once every first list has ended, it reports
/// itself blind for one of `why`.
fn blind_serve_says_so(kubeconfig: &Path, dir: &Path, why: &[&str]) {
    let log = dir.join("serve.log");
    let (_serve, addr) = start_serve(kubeconfig, &["--request-timeout", "1s"], &log, None);
    // Until every first list has ended it is "still listing"; then it must say why not.
    let (code, body) = wait_until("/readyz past the first lists", || {
        get(&addr, "/readyz").filter(|(_, b)| !b.contains("still listing"))
    });
    assert_eq!(code, 503, "{body}");
    assert!(
        body.contains("never listed") && why.iter().any(|w| body.contains(w)),
        "says which resources are unknown and why: {body}"
    );
    let (code, report) = get(&addr, "/report").expect("report");
    assert_eq!(code, 503, "no all-clear: {report}");
    let report: Value = serde_json::from_str(&report).expect("JSON");
    assert!(report.get("findings").is_none(), "{report}");
    assert!(
        report["error"]
            .as_str()
            .is_some_and(|e| e.contains("never listed")),
        "{report}"
    );
    let (_, metrics) = get(&addr, "/metrics").expect("metrics");
    assert!(metrics.contains("restorewatch_ready 0"), "{metrics}");
}

fn kubeconfig_for(url: &str, dir: &Path) -> std::path::PathBuf {
    let path = dir.join("kubeconfig");
    restorewatch::sim::kubeconfig::write(&path, url, None).expect("kubeconfig");
    path
}

#[test]
fn serve_against_a_refused_connection_is_not_ready() {
    let dir = tempfile::tempdir().expect("tmp");
    let port = common::serve::free_port();
    let kc = kubeconfig_for(&format!("http://127.0.0.1:{port}"), dir.path());
    blind_serve_says_so(&kc, dir.path(), &["refused"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_forbidden_every_list_is_not_ready() {
    let sim = Sim::start(SimConfig {
        tokens: HashMap::from([(
            "nobody".to_string(),
            Policy {
                user: "nobody".into(),
                rules: vec![],
            },
        )]),
        ..SimConfig::default()
    })
    .await
    .expect("emulator");
    let dir = tempfile::tempdir().expect("tmp");
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, Some("nobody"))
        .expect("kubeconfig");
    let path = dir.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        blind_serve_says_so(&kc, &path, &["forbidden", "403"]);
    })
    .await
    .expect("join");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_against_a_server_that_never_answers_is_not_ready() {
    let sim = Sim::start(SimConfig {
        faults: FaultSpec {
            freeze: true,
            ..FaultSpec::default()
        },
        ..SimConfig::default()
    })
    .await
    .expect("emulator");
    let dir = tempfile::tempdir().expect("tmp");
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let path = dir.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        blind_serve_says_so(&kc, &path, &["no answer"]);
    })
    .await
    .expect("join");
    sim.shutdown().await;
}

/// The lines of `log` that say something about the watch of `resource`.
fn watch_lines(log: &str, resource: &str) -> Vec<String> {
    let about = format!("watch of {resource} on ");
    log.lines()
        .filter(|l| l.contains(&about))
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_goes_away_makes_serve_stale_and_logs_each_watch_once_down_once_back() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let port = sim.port();
    let url = sim.url();
    let dir = tempfile::tempdir().expect("tmp");
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let log = dir.path().join("serve.log");
    let (_serve, addr) = start_serve(&kc, &["--request-timeout", "2s"], &log, None);
    let a = addr.clone();
    tokio::task::spawn_blocking(move || {
        wait_until("ready", || get(&a, "/readyz").filter(|(c, _)| *c == 200))
    })
    .await
    .expect("join");

    sim.shutdown().await;
    let (a, l) = (addr.clone(), log.clone());
    let (body, report) = tokio::task::spawn_blocking(move || {
        wait_until("stale", || {
            get(&a, "/readyz").filter(|(c, b)| *c == 503 && b.contains("stale"))
        });
        // Each watch has said it is down by now (and has failed again and again meanwhile).
        wait_until("every watch logged down", || {
            let text = std::fs::read_to_string(&l).ok()?;
            KINDS
                .iter()
                .all(|k| !watch_lines(&text, &k.resource_name()).is_empty())
                .then_some(())
        });
        // A watch logs before its failure reaches the next frame, so the readiness text may
        // lag the log by a frame: wait for it to name the resource, as a probe would see later.
        let body = wait_until("restorejobs named in /readyz", || {
            get(&a, "/readyz")
                .map(|(_, b)| b)
                .filter(|b| b.contains("restorejobs.backups.cozystack.io (down since "))
        });
        (body, get(&a, "/report").expect("report"))
    })
    .await
    .expect("join");
    assert!(
        body.contains("restorejobs.backups.cozystack.io (down since "),
        "which resource and since when: {body}"
    );
    assert_eq!(report.0, 200, "the report stays, marked: {}", report.1);
    let report: Value = serde_json::from_str(&report.1).expect("JSON");
    let down = report["watchesDown"].as_array().expect("watchesDown");
    assert!(
        down.iter()
            .any(|d| d["resource"] == "restorejobs.backups.cozystack.io"
                && d["since"].is_string()
                && d["error"].as_str().is_some_and(|e| !e.is_empty())),
        "{down:?}"
    );
    assert!(report["findings"].is_array());

    // The same port again: every watch comes back.
    let sim = Sim::start(SimConfig {
        port,
        ..SimConfig::default()
    })
    .await
    .expect("emulator again");
    let (a, l) = (addr.clone(), log.clone());
    let text = tokio::task::spawn_blocking(move || {
        wait_until("ready again", || {
            get(&a, "/readyz").filter(|(c, _)| *c == 200)
        });
        wait_until("every watch logged back", || {
            let text = std::fs::read_to_string(&l).ok()?;
            KINDS
                .iter()
                .all(|k| {
                    watch_lines(&text, &k.resource_name())
                        .iter()
                        .any(|l| l.contains("is back after"))
                })
                .then_some(text)
        })
    })
    .await
    .expect("join");
    let lines = watch_lines(&text, "restorejobs.backups.cozystack.io");
    assert_eq!(lines.len(), 2, "one line down, one back: {lines:#?}");
    assert!(
        lines[0].contains("WARN") && lines[0].contains(&url) && lines[0].contains("is down since"),
        "resource, server, since when, why: {}",
        lines[0]
    );
    assert!(lines[1].contains("INFO"), "{}", lines[1]);
    assert!(
        !text.contains("kube_client") && !text.contains("failed with error"),
        "kube's own per-request error is silenced:\n{text}"
    );
    sim.shutdown().await;
}
