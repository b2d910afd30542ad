//! Credentials that controllers quote into messages (issue 27, point 4): an Event's message, a
//! RestoreJob's `status.message` and condition message, a Velero Restore's `failureReason`
//! and `validationErrors`, written in the forms a failed command leaves behind (`--password
//! VALUE`, a URL's `user:password@`, `key=value`, a PEM private key, GitHub/GitLab/Slack
//! tokens, an AWS access key id). None reaches any output: `report` (Markdown and JSON),
//! `check -o text` and `-o json`, the dashboard's screens, and `serve`'s `/report` and
//! `/metrics` (the finding message label goes straight into the monitoring database). The
//! messages themselves are still shown, with the marker where the secret was.

mod common;
mod serve_support;

use common::{press, render, typ};
use crossterm::event::KeyCode;
use jiff::Timestamp;
use restorewatch::analysis::{Settings, analyze};
use restorewatch::cli::check::load_snapshot;
use restorewatch::pipeline::Frame;
use restorewatch::sim::{Sim, SimConfig};
use restorewatch::ui::app::{App, Screen};
use restorewatch::ui::{Msg, update};
use serde_json::{Value, json};
use serve_support::{get, start_serve};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

const FIXTURE: &str = "tests/fixtures/velero-restore-failed/failed-nothing-restored.yaml";
const NOW: &str = "2026-11-20T10:20:00Z";
const REDACTED: &str = "<redacted by restorewatch>";

/// Every planted secret holds this; so does nothing else.
const PLANTED: &str = "PLANTED";

/// A RestoreJob's message, quoted by the `restore-failed` finding and the report's summary.
const RJ_MESSAGE: &str = "restic restore failed: restic --repo s3:https://s3/b --password \
    PLANTEDflagpw9 exited 1; source postgres://app:PLANTEDurlpw@db:5432/app";
/// A condition's message.
const CONDITION: &str = "token glpat-PLANTEDglpat0123456789 rejected";
/// Velero's failure reason, quoted by `velero-restore-failed`.
const FAILURE: &str = "error downloading backup: credentials ghp_PLANTEDgithubToken0123456789abcd \
    and AKIAPLANTED0AWS0KEY1 refused";
const VALIDATION: &str = "secret_key=PLANTEDvalidation is not allowed";
/// Event messages, shown in the report's timeline and on `:events`.
const EVENTS: [&str; 2] = [
    "hook failed: -----BEGIN RSA PRIVATE KEY-----\nMIIEpPLANTEDpemBODY\nq2sjPLANTED\n\
     -----END RSA PRIVATE KEY----- rejected",
    "notify xoxb-PLANTED-slack-0123456789 failed; retry with password=PLANTEDkv",
];

fn planted_items() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let text = std::fs::read_to_string(path).expect("fixture");
    let mut docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("YAML");
    let mut events = 0;
    for d in &mut docs {
        match d["kind"].as_str() {
            Some("RestoreJob") => {
                d["status"]["message"] = json!(RJ_MESSAGE);
                d["status"]["conditions"] = json!([{"type": "Ready", "status": "False",
                    "reason": "Failed", "message": CONDITION,
                    "lastTransitionTime": "2026-11-20T10:05:00Z"}]);
            }
            Some("Restore") => {
                d["status"]["failureReason"] = json!(FAILURE);
                d["status"]["validationErrors"] = json!([VALIDATION]);
            }
            Some("Event")
                if d["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("Suspended"))
                    && events < EVENTS.len() =>
            {
                d["message"] = json!(EVENTS[events]);
                events += 1;
            }
            _ => {}
        }
    }
    assert_eq!(events, EVENTS.len(), "the fixture's Events were planted");
    docs
}

fn planted_dump(dir: &Path) -> PathBuf {
    let out = dir.join("planted.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": planted_items()});
    std::fs::write(&out, list.to_string()).expect("dump");
    out
}

fn assert_hidden(place: &str, text: &str) {
    assert!(
        !text.contains(PLANTED),
        "{place} shows a planted secret:\n{text}"
    );
}

fn rw(args: &[&str], state: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("NO_COLOR", "1")
        .output()
        .expect("restorewatch runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_hidden(
        &format!("stderr of {args:?}"),
        &String::from_utf8_lossy(&out.stderr),
    );
    stdout
}

#[test]
fn the_binarys_outputs_show_the_messages_without_their_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let dump = planted_dump(dir.path());
    let dump = dump.to_str().expect("path");
    for (what, args) in [
        (
            "check -o text",
            vec!["check", "--snapshot", dump, "--now", NOW],
        ),
        (
            "check -o json",
            vec!["check", "--snapshot", dump, "--now", NOW, "-o", "json"],
        ),
        (
            "report",
            vec![
                "report",
                "tenant-a/restore-test",
                "--snapshot",
                dump,
                "--now",
                NOW,
            ],
        ),
        (
            "report -o json",
            vec![
                "report",
                "tenant-a/restore-test",
                "--snapshot",
                dump,
                "--now",
                NOW,
                "-o",
                "json",
            ],
        ),
    ] {
        let out = rw(&args, dir.path());
        assert!(out.contains("restore-test"), "{what}: {out}");
        assert_hidden(what, &out);
        // The messages are there, their secrets replaced.
        assert!(
            out.contains(REDACTED),
            "{what} shows no redacted message:\n{out}"
        );
        assert!(out.contains("restic restore failed"), "{what}:\n{out}");
    }
    let report = rw(
        &[
            "report",
            "tenant-a/restore-test",
            "--snapshot",
            dump,
            "--now",
            NOW,
        ],
        dir.path(),
    );
    for kept in ["BEGIN RSA PRIVATE KEY", "xoxb-", "ghp_", "AKIA"] {
        assert!(
            report.contains(kept),
            "{kept} is named, its secret hidden:\n{report}"
        );
    }
}

#[test]
fn no_dashboard_screen_shows_a_secret_from_a_message() {
    let dir = tempfile::tempdir().expect("tmp");
    let dump = planted_dump(dir.path());
    let (snap, problems) = load_snapshot(&[dump]).expect("dump loads");
    assert!(problems.is_empty(), "{problems:?}");
    let now: Timestamp = NOW.parse().expect("time");
    let report = analyze(&snap, &Settings::default(), now);
    let frame = Arc::new(Frame {
        seq: 1,
        snapshot: Arc::new(snap),
        report: Arc::new(report),
        analyzed_at: now,
    });
    let mut a = App::new(common::ui_data::options(), now, (200, 80));
    update(&mut a, Msg::Frame(Some(frame)));
    assert_hidden("the restores list", &render(&a));
    press(&mut a, KeyCode::Enter);
    assert!(matches!(a.screen, Screen::Detail(_)));
    let mut seen = String::new();
    for pane in 0..5 {
        let s = render(&a);
        assert_hidden(&format!("restore detail pane {pane}"), &s);
        seen.push_str(&s);
        press(&mut a, KeyCode::Tab);
    }
    for screen in ["events", "findings"] {
        press(&mut a, KeyCode::Char(':'));
        typ(&mut a, screen);
        press(&mut a, KeyCode::Enter);
        let s = render(&a);
        assert_hidden(&format!(":{screen}"), &s);
        seen.push_str(&s);
        press(&mut a, KeyCode::Enter);
        assert_hidden(&format!("enter on :{screen}"), &render(&a));
        press(&mut a, KeyCode::Esc);
    }
    assert!(
        seen.contains("redacted"),
        "a redacted message was drawn:\n{seen}"
    );
}

fn wait_for(addr: &str, path: &str, want: &str) -> String {
    let start = Instant::now();
    loop {
        if let Some((200, body)) = get(addr, path)
            && body.contains(want)
        {
            return body;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "no {path} with {want}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_report_and_metrics_carry_no_secret_from_a_message() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let mut items = planted_items();
    // Namespaces first: the rest live in them.
    items.sort_by_key(|d| d["kind"] != "Namespace");
    for d in items {
        sim.store().put(d).expect("put");
    }
    let dir = tempfile::tempdir().expect("tmp");
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let serve = start_serve(&kc, &[], &[]);
    let addr = serve.addr.clone();
    let (report, metrics) = tokio::task::spawn_blocking(move || {
        (
            wait_for(&addr, "/report", "velero-restore-failed"),
            wait_for(
                &addr,
                "/metrics",
                "restorewatch_finding_info{code=\"velero-restore-failed\"",
            ),
        )
    })
    .await
    .expect("join");
    assert_hidden("/report", &report);
    assert_hidden("/metrics", &metrics);
    assert!(report.contains("restic restore failed"), "{report}");
    assert!(
        metrics.contains(REDACTED),
        "the finding message label is redacted:\n{metrics}"
    );
    sim.shutdown().await;
}

/// What only ends in `key` is not a credential: Flux's shard label `sharding.fluxcd.io/key` on
/// every Cozystack HelmRelease names a shard, and the YAML view shows it (it was hidden).
#[test]
fn a_label_named_like_a_key_is_not_hidden_in_the_yaml_view() {
    use restorewatch::analysis::ObjRef;
    use restorewatch::model::Kind;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/velero-restore-stuck/failed-validation.yaml");
    let (snap, problems) = load_snapshot(&[path]).expect("dump loads");
    assert!(problems.is_empty(), "{problems:?}");
    let hr = snap
        .helm_releases
        .iter()
        .next()
        .map(|h| ObjRef::new(Kind::HelmRelease, &h.meta.namespace, &h.meta.name))
        .expect("a HelmRelease");
    let yaml = restorewatch::ui::select::render_yaml(&snap, &hr).expect("its YAML");
    assert!(
        yaml.contains("sharding.fluxcd.io/key: tenants"),
        "the shard label is shown:\n{yaml}"
    );
}
