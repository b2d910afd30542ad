//! `:ctx NAME` against two emulators, as the dashboard does it: a kubeconfig with two
//! contexts, completion from it, the switch in place, the old context's watches stopped and
//! the header naming the context shown.

mod common;

use common::{press, render, typ};
use crossterm::event::KeyCode;
use restorewatch::analysis::Settings;
use restorewatch::pipeline::FrameRx;
use restorewatch::sim::{Scenario, Sim, SimConfig};
use restorewatch::ui::app::{App, Mode, UiOptions};
use restorewatch::ui::context::{self, Connector};
use restorewatch::ui::{Msg, update};
use std::time::Duration;

fn kubeconfig(alpha: &str, beta: &str) -> String {
    let mut s = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, url) in [("alpha", alpha), ("beta", beta)] {
        s.push_str(&format!("- name: {name}\n  cluster:\n    server: {url}\n"));
    }
    s.push_str("users:\n- name: op\n  user: {}\ncontexts:\n");
    for name in ["alpha", "beta"] {
        s.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: op\n"
        ));
    }
    s.push_str("current-context: alpha\n");
    s
}

/// Feeds the app frames from `frames` until one shows a restore named `name`.
async fn wait_for_restore(app: &mut App, frames: &mut FrameRx, name: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let f = frames.borrow_and_update().clone();
        let found = f
            .as_ref()
            .is_some_and(|f| f.report.restores.iter().any(|r| r.id.name == name));
        update(app, Msg::Frame(f));
        if found {
            return;
        }
        match tokio::time::timeout_at(deadline, frames.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => panic!("the frames closed before {name} showed"),
            Err(_) => panic!("no frame with {name} within 30 s:\n{}", render(app)),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_switches_in_place_between_two_clusters_and_stops_the_old_watches() {
    let a = Sim::start(SimConfig::default()).await.expect("emulator a");
    let b = Sim::start(SimConfig::default()).await.expect("emulator b");
    let _ra = a.play(Scenario::load("vm-healthy").expect("built-in"), 1.0);
    let _rb = b.play(Scenario::load("pg-healthy").expect("built-in"), 1.0);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, kubeconfig(&a.url(), &b.url())).expect("kubeconfig");

    let connector = Connector {
        kubeconfig: Some(path),
        namespace: None,
        settings: Settings::default(),
        readonly: true,
        timeouts: Default::default(),
    };
    // The kubeconfig's current context, as `restorewatch` with no --context starts.
    let mut session = connector.connect(None).await.expect("alpha");
    assert_eq!(session.context, "alpha");
    let opts = UiOptions {
        context: Some(session.context.clone()),
        contexts: connector.contexts().expect("contexts"),
        ..UiOptions::default()
    };
    assert_eq!(opts.contexts, ["alpha", "beta"]);
    let mut app = App::new(opts, jiff::Timestamp::now(), (120, 40));
    let mut frames = session.frames.clone();
    wait_for_restore(&mut app, &mut frames, "restore-test").await;
    let s = render(&app);
    assert!(s.contains("ctx alpha") && s.contains("restore-test"), "{s}");

    // Completion from the kubeconfig, then Enter asks the loop to connect.
    press(&mut app, KeyCode::Char(':'));
    typ(&mut app, "ctx b");
    press(&mut app, KeyCode::Tab);
    assert!(matches!(&app.mode, Mode::Command(cl) if cl.text == "ctx beta"));
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.context_request.as_deref(), Some("beta"));
    let s = render(&app);
    assert!(s.contains("connecting to beta"), "the header says so:\n{s}");

    // What the terminal loop does: connect off the loop, then install the new session.
    let name = app.context_request.take().expect("requested");
    let mut old_frames = session.frames.clone();
    let result = connector.connect(Some(&name)).await;
    assert!(context::install(&mut app, &mut session, name, result));
    assert_eq!(app.opts.context.as_deref(), Some("beta"));

    // The old context's watches stopped: its frame source is gone.
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if old_frames.changed().await.is_err() {
                return;
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "alpha's watches still run after the switch");

    // Nothing of alpha is shown as beta's; then beta's restores come in.
    let s = render(&app);
    assert!(
        !s.contains("restore-test"),
        "alpha's rows after the switch:\n{s}"
    );
    let mut frames = session.frames.clone();
    wait_for_restore(&mut app, &mut frames, "restore-pg1").await;
    let s = render(&app);
    assert!(s.contains("ctx beta") && s.contains("restore-pg1"), "{s}");
    assert!(!s.contains("restore-test"), "{s}");

    // Unknown names are refused with the choices; the same context is a no-op.
    press(&mut app, KeyCode::Char(':'));
    typ(&mut app, "ctx gamma");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.context_request, None);
    let s = render(&app);
    assert!(
        s.contains("no context gamma") && s.contains("alpha, beta"),
        "{s}"
    );
    press(&mut app, KeyCode::Char(':'));
    typ(&mut app, "ctx beta");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.context_request, None);
}

#[test]
fn ctx_in_the_demo_or_on_dumps_says_there_is_nothing_to_switch() {
    let mut app = common::ui_data::app(120, 40);
    press(&mut app, KeyCode::Char(':'));
    typ(&mut app, "ctx prod");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.context_request, None);
    assert!(render(&app).contains("nothing to switch"));
}
