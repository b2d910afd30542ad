//! Nothing hangs on a frozen API: `check` gives up naming the server, a watch that went silent
//! counts as down and is rebuilt, and the dashboard says whom it is waiting for.

mod common;

use restorewatch::analysis::Settings;
use restorewatch::cluster::SyncState;
use restorewatch::cluster::client::{Timeouts, watch_client};
use restorewatch::cluster::errors::Endpoint;
use restorewatch::model::Kind;
use restorewatch::pipeline::live::{LiveOptions, LiveSource, WatchOptions, start_watching};
use restorewatch::pipeline::{Frame, FrameRx};
use restorewatch::sim::{Scenario, Sim, SimConfig};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

fn check(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .arg("check")
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn kubeconfig_for(url: &str, dir: &Path) -> String {
    let path = dir.join("kubeconfig");
    restorewatch::sim::kubeconfig::write(&path, url, None).expect("kubeconfig");
    path.display().to_string()
}

#[test]
fn check_against_a_server_that_accepts_and_never_answers_exits_2_naming_it() {
    let url = silent_server();
    let dir = tempfile::tempdir().expect("tmp");
    let kc = kubeconfig_for(&url, dir.path());
    let (code, err) = check(&["--kubeconfig", &kc, "--request-timeout", "2s"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&url), "names the server: {err}");
    assert!(
        err.contains("no answer") && err.contains("2s"),
        "says it waited and for how long: {err}"
    );
}

#[test]
fn a_refused_connection_names_host_and_port() {
    // A port nothing listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let dir = tempfile::tempdir().expect("tmp");
    let kc = kubeconfig_for(&format!("http://127.0.0.1:{port}"), dir.path());
    let (code, err) = check(&["--kubeconfig", &kc]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("connection refused by 127.0.0.1:{port}")),
        "{err}"
    );
}

/// Accepts every connection and keeps it open without a byte in answer; its URL.
fn silent_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    url
}

/// The live pipeline as the dashboard starts it, on `config` with timeouts `t`.
fn watch(config: kube::Config, url: &str, t: Timeouts) -> LiveSource {
    start_watching(
        watch_client(config, &t).expect("client"),
        LiveOptions {
            namespace: None,
            context: "test".into(),
            cluster: url.to_string(),
            settings: Settings::default(),
        },
        WatchOptions {
            timeouts: t,
            endpoint: Some(Endpoint {
                server: url.to_string(),
                ..Endpoint::default()
            }),
        },
    )
}

async fn wait_for(
    frames: &mut FrameRx,
    secs: u64,
    what: &str,
    want: impl Fn(&Frame) -> bool,
) -> Arc<Frame> {
    common::wait_frame(frames, secs, what, want, |last| {
        format!("health: {:?}", last.map(|f| f.snapshot.health.clone()))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_server_takes_every_watch_down_and_they_are_rebuilt() {
    let sim = Sim::start(SimConfig {
        // A frozen emulator still sends bookmarks on open streams, like a server whose
        // storage hangs: only the end of each stream and the reopen stop answering.
        bookmark_interval: Duration::from_millis(300),
        ..SimConfig::default()
    })
    .await
    .expect("emulator");
    sim.play(Scenario::load("vm-healthy").expect("built-in"), 1000.0)
        .finished()
        .await;
    let t = Timeouts {
        request: Some(Duration::from_secs(1)),
        connect: Some(Duration::from_secs(1)),
        watch: Duration::from_secs(2),
        watch_margin: Duration::from_secs(1),
        exec: Duration::from_secs(60),
    };
    let source = watch(sim.kube_config(None).expect("config"), &sim.url(), t);
    let mut frames = source.frames.clone();
    wait_for(&mut frames, 20, "every kind synced", |f| {
        f.snapshot
            .health
            .values()
            .all(|h| h.state == SyncState::Synced)
    })
    .await;

    sim.faults().freeze(true);
    let down = wait_for(&mut frames, 30, "the watches marked down", |f| {
        [
            Kind::RestoreJob,
            Kind::PersistentVolumeClaim,
            Kind::DataVolume,
        ]
        .iter()
        .all(|k| f.snapshot.is_stale(*k))
    })
    .await;
    let error = match &down.snapshot.health[&Kind::RestoreJob].state {
        SyncState::Resyncing { error, .. } | SyncState::Failed { error, .. } => error.clone(),
        other => panic!("{other:?}"),
    };
    // Which of the two bounds fires first is a race on a frozen server: the watch's silence
    // (timeout plus margin, 3s) or, once the watch is rebuilt, the relist's --request-timeout
    // (1s). Either way the error names the server and the bound that ran out.
    let silent_watch = error.contains("3s");
    let silent_list = error.contains("within 1s (--request-timeout)");
    assert!(
        error.contains(&sim.url()) && (silent_watch || silent_list),
        "says which server went silent and for how long: {error}"
    );

    sim.faults().freeze(false);
    wait_for(&mut frames, 60, "every watch rebuilt and synced", |f| {
        f.snapshot
            .health
            .values()
            .all(|h| h.state == SyncState::Synced)
    })
    .await;
    drop(source);
    sim.shutdown().await;
}

#[test]
fn the_dashboard_says_whom_it_is_connecting_to_and_for_how_long() {
    let mut opts = common::ui_data::options();
    opts.connecting_to = Some("https://10.0.0.1:6443 (context prod)".into());
    let start = common::ui_data::now();
    let mut app = restorewatch::ui::App::new(opts, start, (100, 20));
    app.now = start + jiff::SignedDuration::from_secs(12);
    let screen = common::render(&app);
    assert!(
        screen.contains("connecting to https://10.0.0.1:6443 (context prod)… 12s"),
        "{screen}"
    );
    // Once the first frame is there, the header names the context as before.
    restorewatch::ui::update(
        &mut app,
        restorewatch::ui::Msg::Frame(Some(common::ui_data::frame(1))),
    );
    assert!(!common::render(&app).contains("connecting to"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboards_first_list_gives_up_after_the_request_timeout_not_the_watch_timeout() {
    let url = silent_server();
    // A watch idle limit far from the request timeout, so that the message tells which one
    // ended the wait.
    let t = Timeouts {
        request: Some(Duration::from_secs(1)),
        connect: Some(Duration::from_secs(1)),
        watch: Duration::from_secs(20),
        watch_margin: Duration::from_secs(5),
        exec: Duration::from_secs(60),
    };
    let source = watch(kube::Config::new(url.parse().expect("url")), &url, t);
    let mut frames = source.frames.clone();
    let frame = wait_for(&mut frames, 60, "a picture saying the lists failed", |f| {
        f.snapshot.health.values().all(|h| h.state.is_degraded())
    })
    .await;
    let error = match &frame.snapshot.health[&Kind::RestoreJob].state {
        SyncState::Resyncing { error, .. } | SyncState::Failed { error, .. } => error.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        error.contains(&url)
            && error.contains("no answer to the list")
            && error.contains("within 1s"),
        "names the server and the request timeout: {error}"
    );
    // What the dashboard shows with that picture.
    let mut app = restorewatch::ui::App::new(
        common::ui_data::options(),
        jiff::Timestamp::now(),
        (160, 20),
    );
    restorewatch::ui::update(&mut app, restorewatch::ui::Msg::Frame(Some(frame)));
    let screen = common::render(&app);
    assert!(
        screen.contains("no answer to the list"),
        "the screen says why it is empty: {screen}"
    );
    drop(source);
}
