//! Cluster text written to attack the terminal (an OSC that retitles it, a screen clear, CR and
//! backspaces that overwrite, C1 CSI, bidi overrides) planted in a dump and in the emulator:
//! the binary's human-readable output shows it escaped and sends none of it raw; its JSON output
//! keeps the exact strings.

mod common;

use common::{press, render, typ};
use crossterm::event::KeyCode;
use restorewatch::analysis::{Settings, analyze};
use restorewatch::cli::check::load_snapshot;
use restorewatch::pipeline::Frame;
use restorewatch::sim::{Sim, SimConfig};
use restorewatch::ui::app::App;
use restorewatch::ui::{Msg, update};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// Every kind of character a terminal acts on or that reorders text.
const EVIL: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{8}\u{9b}1m\u{7f}\u{202e}\u{2066}!";
/// How the start of it must look once shown.
const EVIL_SHOWN: &str = "\\e]0;pwned\\x07\\e[2J\\r\\x08\\x9b1m\\x7f!";

fn fixture(rel: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    let text = std::fs::read_to_string(&path).expect("fixture");
    serde_saphyr::from_str(&text).expect("fixture parses")
}

/// Appends `EVIL` to every string that contains `needle`, wherever it is in the objects.
fn plant(v: &mut Value, needle: &str) {
    match v {
        Value::String(s) if s.contains(needle) => {
            *s = s.replace(needle, &format!("{needle}{EVIL}"))
        }
        Value::Array(a) => a.iter_mut().for_each(|x| plant(x, needle)),
        Value::Object(o) => o.values_mut().for_each(|x| plant(x, needle)),
        _ => {}
    }
}

/// The first character a terminal would act on, with where it is.
fn first_raw_control(bytes: &[u8]) -> Option<(usize, char)> {
    let text = String::from_utf8_lossy(bytes);
    text.char_indices().find(|(_, c)| {
        let c = *c;
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    })
}

fn assert_clean(what: &str, bytes: &[u8]) {
    if let Some((at, c)) = first_raw_control(bytes) {
        let text = String::from_utf8_lossy(bytes);
        let from = text[..at]
            .char_indices()
            .rev()
            .nth(60)
            .map_or(0, |(i, _)| i);
        panic!(
            "{what}: raw U+{:04X} at byte {at}, after: {:?}",
            u32::from(c),
            &text[from..at]
        );
    }
}

fn rw(args: &[&str], state: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state.join("config"))
        .output()
        .expect("the binary runs")
}

/// Three dumps whose quoted text is crafted: a failed RestoreJob's message and conditions, its
/// name, a Cluster phase (restore-failed), a Velero Restore's validationErrors and phase
/// (velero-restore-stuck), and an Event message (disk-not-kept).
fn crafted_dumps(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let cases: [(&str, &[&str], &str); 3] = [
        (
            "restore-failed/cnpg-deadline.yaml",
            &[
                "RestoreJob exceeded",
                "Setting up primary",
                "restore-orders",
            ],
            "2026-11-20T10:40:00Z",
        ),
        (
            "velero-restore-stuck/failed-validation.yaml",
            &["Error retrieving backup"],
            "2026-11-20T10:30:00Z",
        ),
        (
            "disk-not-kept/prefix-keep-failed.yaml",
            &["Failed to keep old PVC"],
            "2026-11-20T10:06:00Z",
        ),
    ];
    cases
        .iter()
        .enumerate()
        .map(|(i, (rel, needles, now))| {
            let mut v = fixture(rel);
            for n in *needles {
                plant(&mut v, n);
            }
            let path = dir.join(format!("crafted-{i}.json"));
            std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
            (path, *now)
        })
        .collect()
}

#[test]
fn check_text_shows_crafted_cluster_text_escaped_and_json_keeps_it_exact() {
    let dir = tempfile::tempdir().unwrap();
    for (path, now) in crafted_dumps(dir.path()) {
        let p = path.to_str().unwrap();
        let out = rw(&["check", "--snapshot", p, "--now", now], dir.path());
        assert_clean(&format!("check -o text stdout ({p})"), &out.stdout);
        assert_clean(&format!("check -o text stderr ({p})"), &out.stderr);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(EVIL_SHOWN),
            "the crafted text is shown, escaped ({p}):\n{text}"
        );

        let out = rw(
            &["check", "--snapshot", p, "--now", now, "-o", "json"],
            dir.path(),
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
        let messages: Vec<&str> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["message"].as_str())
            .collect();
        assert!(
            messages.iter().any(|m| m.contains(EVIL)),
            "JSON keeps the exact string ({p}): {messages:?}"
        );
    }
}

#[test]
fn errors_that_quote_file_names_and_documents_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    // A file name from a hostile archive, that does not exist.
    let missing = dir.path().join(format!("dump{EVIL}.yaml"));
    let out = rw(
        &["check", "--snapshot", missing.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_clean("the unreadable-file error", &out.stderr);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\\e]0;pwned\\x07"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A document that does not parse, whose text is quoted by the parser, in a file whose name
    // is crafted too.
    let broken = dir.path().join(format!("broken{EVIL}.yaml"));
    std::fs::write(
        &broken,
        format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n---\n{EVIL}: [\n"),
    )
    .unwrap();
    let out = rw(
        &["check", "--snapshot", broken.to_str().unwrap()],
        dir.path(),
    );
    assert_clean("the malformed-document warning", &out.stderr);
    assert_clean("the report", &out.stdout);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("broken\\e]0;pwned"),
        "the problem names the file, escaped: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `action fix-servername --dry-run` prints a plan quoting the app's newServerName and the
/// Cluster's serverName, both crafted in the emulator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_plan_shows_crafted_names_escaped() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let mut v = fixture("servername-reverted/stale-cache-revert.yaml");
    plant(&mut v, "postgres-orders-restore-");
    for item in v["items"].as_array().unwrap().clone() {
        sim.store().load(item).expect("object loads");
    }
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).unwrap();
    let state = dir.path().to_path_buf();
    let kc_arg = kc.to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        rw(
            &[
                "action",
                "fix-servername",
                "--restore",
                "tenant-a/restore-orders",
                "--dry-run",
                "--kubeconfig",
                &kc_arg,
            ],
            &state,
        )
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean("the action plan", &out.stdout);
    assert_clean("the action's stderr", &out.stderr);
    assert!(
        stdout.contains(&format!("postgres-orders-restore-{EVIL_SHOWN}")),
        "the plan names the crafted value, escaped:\n{stdout}"
    );
    sim.shutdown().await;
}

/// The dashboard on the same crafted dumps: every screen shows the crafted text escaped, as
/// `check` does, and no cell holds a character the terminal would act on.
#[test]
fn the_dashboard_shows_crafted_cluster_text_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let mut shown_somewhere = 0;
    for (path, now) in crafted_dumps(dir.path()) {
        let (snap, problems) = load_snapshot(std::slice::from_ref(&path)).expect("dump loads");
        assert!(problems.is_empty(), "{problems:?}");
        let now: jiff::Timestamp = now.parse().unwrap();
        let report = analyze(&snap, &Settings::default(), now);
        let frame = Arc::new(Frame {
            seq: 1,
            snapshot: Arc::new(snap),
            report: Arc::new(report),
            analyzed_at: now,
        });
        let mut a = App::new(common::ui_data::options(), now, (200, 50));
        update(&mut a, Msg::Frame(Some(frame)));
        let mut screens = vec![("restores".to_string(), render(&a))];
        press(&mut a, KeyCode::Enter);
        for pane in 0..4 {
            screens.push((format!("detail pane {pane}"), render(&a)));
            press(&mut a, KeyCode::Tab);
        }
        for screen in ["findings", "events"] {
            press(&mut a, KeyCode::Char(':'));
            typ(&mut a, screen);
            press(&mut a, KeyCode::Enter);
            screens.push((screen.to_string(), render(&a)));
        }
        for (name, s) in &screens {
            assert_clean(&format!("{name} of {}", path.display()), s.as_bytes());
            if s.contains("\\e]0;pwned\\x07") {
                shown_somewhere += 1;
            }
        }
        assert!(
            screens.iter().any(|(_, s)| s.contains("\\e]0;pwned\\x07")),
            "the crafted text is shown escaped on some screen of {}:\n{}",
            path.display(),
            screens
                .iter()
                .map(|(n, s)| format!("--- {n}\n{s}"))
                .collect::<String>()
        );
    }
    assert!(shown_somewhere >= 3, "{shown_somewhere}");
}
