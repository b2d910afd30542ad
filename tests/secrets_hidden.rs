//! Passwords planted where Cozystack users keep them (a Postgres app's `users`, its backup keys,
//! a HelmRelease's `values`, a Backup's `underlyingResources`) appear in no view: not in the
//! YAML of any object, not on any dashboard screen, not in `check` text or JSON. Also what hides
//! in plainer sight: a container env entry named like a credential, a config file inside a
//! string, a URL's `user:password@`, `*.key`, `htpasswd`, `auth`, `bearer` and `dsn` keys.

mod common;

use common::{press, render, typ};
use crossterm::event::KeyCode;
use jiff::Timestamp;
use restorewatch::analysis::{ObjRef, Settings, analyze};
use restorewatch::cli::check::load_snapshot;
use restorewatch::model::Kind;
use restorewatch::pipeline::Frame;
use restorewatch::ui::app::{App, Screen, YamlFetch, YamlState};
use restorewatch::ui::select::render_yaml;
use restorewatch::ui::{Msg, update};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const FIXTURE: &str = "servername-reverted/stale-cache-revert.yaml";
const NOW: &str = "2026-11-20T10:05:00Z";
const PLANTED: [&str; 15] = [
    "PLANTED-pg-user-pw",
    "PLANTED-s3-secret",
    "PLANTED-hr-user-pw",
    "PLANTED-restic-pw",
    "PLANTED-hr-token",
    "PLANTED-vm-cloud-init-pw",
    // The fixture's own: inside the Backup's underlyingResources.
    "fixture-secret-do-not-display",
    "PLANTED-env-db-pw",
    "PLANTED-config-file-pw",
    "PLANTED-url-pw",
    "PLANTED-tls-key",
    "PLANTED-htpasswd",
    "PLANTED-auth",
    "PLANTED-bearer",
    "PLANTED-dsn-pw",
];

/// The fixture with passwords planted in the app spec and the HelmRelease values, as a file.
fn planted_dump(dir: &Path) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(FIXTURE);
    let mut v: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for item in v["items"].as_array_mut().unwrap() {
        match item["kind"].as_str() {
            Some("Postgres") => {
                item["spec"]["users"] =
                    json!({"alice": {"password": PLANTED[0], "replication": true}});
                item["spec"]["backup"]["s3SecretKey"] = json!(PLANTED[1]);
            }
            Some("HelmRelease") => {
                item["spec"]["values"]["users"] = json!({"alice": {"password": PLANTED[2]}});
                item["spec"]["values"]["backup"]["resticPassword"] = json!(PLANTED[3]);
                item["spec"]["values"]["monitoring"] = json!({"apiToken": PLANTED[4]});
            }
            Some("Cluster") => {
                item["spec"]["env"] = json!([{"name": "DB_PASSWORD", "value": PLANTED[7]},
                                             {"name": "TZ", "value": "UTC"}]);
                item["spec"]["externalClusters"] = json!([{"name": "origin",
                    "connectionString": format!("postgres://app:{}@origin:5432/app", PLANTED[9])}]);
                item["spec"]["postgresql"]["parameters"]["primary_conninfo"] =
                    json!(format!("host=origin user=r password={}", PLANTED[14]));
            }
            Some("ObjectStore") => {
                item["spec"]["configuration"]["endpointCA"] =
                    json!({"ca.crt": "cert", "server.key": PLANTED[10]});
                item["spec"]["instanceSidecarConfiguration"] = json!({
                    "htpasswd": PLANTED[11], "auth": PLANTED[12], "bearer": PLANTED[13],
                    "sentryDsn": format!("https://k:{}@sentry/1", PLANTED[14])});
            }
            _ => {}
        }
        if item["kind"] == "HelmRelease" {
            item["spec"]["values"]["extraConfig"] =
                json!(format!("listen_addresses: '*'\npassword: {}\n", PLANTED[8]));
        }
    }
    // A VM whose cloud-init sets a password, as VMInstance apps render it.
    v["items"].as_array_mut().unwrap().push(json!({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": "vm1", "namespace": "tenant-a", "uid": "0b7c0e0e-0000-4000-8000-00000000aaaa"},
        "spec": {"runStrategy": "Always", "template": {"spec": {"volumes": [
            {"name": "cloudinitdisk", "cloudInitNoCloud": {
                "userData": format!("#cloud-config\npassword: {}\n", PLANTED[5])}}]}}}
    }));
    let out = dir.join("planted.json");
    std::fs::write(&out, serde_json::to_string(&v).unwrap()).unwrap();
    out
}

fn assert_hidden(view: &str, text: &str) {
    for p in PLANTED {
        assert!(!text.contains(p), "{view} shows {p}:\n{text}");
    }
}

fn app_on(dump: &Path, w: u16, h: u16) -> App {
    let (snap, problems) = load_snapshot(&[dump.to_path_buf()]).expect("dump loads");
    assert!(problems.is_empty(), "{problems:?}");
    let now: Timestamp = NOW.parse().unwrap();
    let report = analyze(&snap, &Settings::default(), now);
    let frame = Arc::new(Frame {
        seq: 1,
        snapshot: Arc::new(snap),
        report: Arc::new(report),
        analyzed_at: now,
    });
    let mut a = App::new(common::ui_data::options(), now, (w, h));
    update(&mut a, Msg::Frame(Some(frame)));
    a
}

#[test]
fn the_yaml_of_every_object_shows_no_planted_secret() {
    let dir = tempfile::tempdir().unwrap();
    let dump = planted_dump(dir.path());
    let mut a = app_on(&dump, 160, 400);
    let snap = a.shown.clone().unwrap().snapshot.clone();
    let mut seen = 0;
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    for item in doc["items"].as_array().unwrap() {
        let kind = Kind::from_api(
            item["apiVersion"].as_str().unwrap_or(""),
            item["kind"].as_str().unwrap_or(""),
        );
        let Some(kind) = kind else { continue };
        let ns = item["metadata"]["namespace"].as_str().unwrap_or("");
        let name = item["metadata"]["name"].as_str().unwrap();
        let target = ObjRef::new(kind, ns, name);
        let text = render_yaml(&snap, &target).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_hidden(&format!("the YAML of {target}"), &text);
        // And as drawn, through the view.
        a.screen = Screen::Yaml(YamlState {
            target,
            text: Ok(text),
            scroll: 0,
            fetch: YamlFetch::NotNeeded,
        });
        assert_hidden("the YAML view", &render(&a));
        seen += 1;
    }
    assert!(seen >= 10, "the YAML of {seen} objects was checked");
    // The redaction is visible: the shape stays with a marker where the secret was.
    let app_yaml = render_yaml(&snap, &ObjRef::new(Kind::Postgres, "tenant-a", "orders")).unwrap();
    assert!(
        app_yaml.contains("password: <redacted by restorewatch>"),
        "{app_yaml}"
    );
    assert!(app_yaml.contains("replication: true"), "{app_yaml}");
}

#[test]
fn no_dashboard_screen_shows_a_planted_secret() {
    let dir = tempfile::tempdir().unwrap();
    let dump = planted_dump(dir.path());
    let mut a = app_on(&dump, 160, 60);
    assert_hidden("the restores list", &render(&a));
    press(&mut a, KeyCode::Enter);
    assert!(matches!(a.screen, Screen::Detail(_)));
    for pane in 0..4 {
        assert_hidden(&format!("restore detail pane {pane}"), &render(&a));
        press(&mut a, KeyCode::Tab);
    }
    for screen in ["events", "findings", "orig"] {
        press(&mut a, KeyCode::Char(':'));
        typ(&mut a, screen);
        press(&mut a, KeyCode::Enter);
        assert_hidden(&format!(":{screen}"), &render(&a));
        press(&mut a, KeyCode::Char('y'));
        assert_hidden(&format!("y on :{screen}"), &render(&a));
        press(&mut a, KeyCode::Esc);
    }
}

#[test]
fn check_text_and_json_show_no_planted_secret() {
    let dir = tempfile::tempdir().unwrap();
    let dump = planted_dump(dir.path());
    for format in ["text", "json"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_restorewatch"))
            .args([
                "check",
                "--snapshot",
                dump.to_str().unwrap(),
                "--now",
                NOW,
                "-o",
                format,
            ])
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("servername-reverted"), "{stdout}");
        assert_hidden(&format!("check -o {format}"), &stdout);
        assert_hidden(
            &format!("check -o {format} stderr"),
            &String::from_utf8_lossy(&out.stderr),
        );
    }
}
