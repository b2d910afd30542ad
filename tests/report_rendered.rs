//! `restorewatch report` pasted into an issue, rendered by a real GFM renderer (`cmark-gfm`,
//! the library GitHub's renderer is built on, with its autolink and table extensions and raw
//! HTML let through as GitHub lets some through): cluster text written to be hostile (an
//! Event's message, `status.message`, a free-text `status.phase`, a disk name, the dump's file
//! name) makes no link, no image, no HTML and no `@mention`; it is all inside code spans, and
//! each code span reads back exactly the value, backticks, pipes and backslashes included.
//! (Issue 27, point 3.)

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const FIXTURE: &str = "tests/fixtures/disk-not-restored/prefix-lab-race-succeeded.yaml";
const NOW: &str = "2026-11-20T10:20:00Z";

/// Everything a renderer could act on: inline HTML, images, links, bare URLs and e-mail
/// addresses the autolink extension links, mentions, a comment, an entity, backticks that
/// would end a short fence, a pipe and an escaped pipe that would split a table cell.
const HOSTILE: &str = "x`y`` | a\\|b <img src=https://evil.example/p.png> \
    <details><summary>s</summary> @octocat @evil-org/team www.evil.example \
    https://evil.example/b mail@evil.example [l](https://evil.example/l) \
    ![i](https://evil.example/i.png) <!-- c --> &amp; <https://evil.example/auto> **b** ~~s~~";

/// A disk name as a dump may carry it (no API server would, a file can).
const NAME_TAIL: &str = "@octocat<img src=x>www.evil.example";

fn cmark_gfm(markdown: &str) -> String {
    // Required, as kubectl and tmux are for their tests: a machine without it fails here
    // (`.ci/deps` installs it) rather than passing without having checked anything.
    let mut child = Command::new("cmark-gfm")
        .args([
            "--unsafe",
            "-e",
            "autolink",
            "-e",
            "table",
            "-e",
            "strikethrough",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cmark-gfm is required for this test (.ci/deps installs it)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(markdown.as_bytes())
        .expect("markdown written");
    let out = child.wait_with_output().expect("cmark-gfm ran");
    assert!(out.status.success(), "cmark-gfm failed");
    String::from_utf8(out.stdout).expect("HTML is UTF-8")
}

fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The texts of the `<code>` elements, and the HTML with them taken out.
fn split_code(html: &str) -> (Vec<String>, String) {
    let mut codes = Vec::new();
    let mut rest = String::new();
    let mut at = html;
    while let Some(start) = at.find("<code>") {
        rest.push_str(&at[..start]);
        let inner = &at[start + "<code>".len()..];
        let end = inner.find("</code>").expect("a closed <code>");
        codes.push(unescape(&inner[..end]));
        at = &inner[end + "</code>".len()..];
    }
    rest.push_str(at);
    (codes, rest)
}

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    serde_saphyr::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("YAML")
}

/// The fixture with hostile text where a tenant writes it: every RestoreJob Event's message,
/// the RestoreJob's `status.message` and a condition's, and optionally its free-text phase
/// and the name of one disk (everywhere it is referenced).
fn hostile_dump(dir: &Path, phase_and_name: bool) -> PathBuf {
    let mut v = fixture();
    for item in v["items"].as_array_mut().expect("items") {
        match item["kind"].as_str() {
            Some("RestoreJob") => {
                item["status"]["message"] = json!(HOSTILE);
                item["status"]["conditions"] = json!([{"type": "Ready", "status": "False",
                    "reason": "Hostile", "message": HOSTILE,
                    "lastTransitionTime": "2026-11-20T10:00:05Z"}]);
                if phase_and_name {
                    item["status"]["phase"] = json!(HOSTILE);
                }
            }
            Some("Event")
                if item["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("Suspended")) =>
            {
                item["message"] = json!(HOSTILE);
            }
            _ => {}
        }
    }
    let mut text = serde_json::to_string(&v).expect("JSON");
    if phase_and_name {
        text = text.replace("vm-disk-data", &format!("vm-disk-data{NAME_TAIL}"));
    }
    // The file name is in the report's last line.
    let file = dir.join(format!(
        "dump @octocat www.evil.example <b>{}.json",
        u8::from(phase_and_name)
    ));
    std::fs::write(&file, text).expect("dump written");
    file
}

fn report(dump: &Path, state: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(["report", "tenant-a/restore-test", "--snapshot"])
        .arg(dump)
        .args(["--now", NOW])
        .env("XDG_STATE_HOME", state)
        .env("NO_COLOR", "1")
        .output()
        .expect("restorewatch runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn assert_inert(what: &str, markdown: &str) {
    let html = cmark_gfm(markdown);
    assert!(
        html.contains("<table>"),
        "{what}: not rendered as a report:\n{html}"
    );
    let lower = html.to_ascii_lowercase();
    for made in [
        "<a ",
        "<a>",
        "<img",
        "<details",
        "<summary",
        "<!--",
        "<del>",
        "<strong>b",
    ] {
        assert!(
            !lower.contains(made),
            "{what}: cluster text became {made:?}:\n{markdown}\n---\n{html}"
        );
    }
    let (codes, outside) = split_code(&html);
    for word in ["evil", "octocat", "@"] {
        assert!(
            !outside.contains(word),
            "{what}: {word:?} outside a code span:\n{outside}"
        );
    }
    // Every value is shown, exactly: the escapes are the renderer's to undo, not the reader's.
    assert!(
        codes.iter().any(|c| c == HOSTILE),
        "{what}: no code span reads back the message exactly; spans: {codes:#?}"
    );
}

#[test]
fn hostile_messages_render_as_text_on_github() {
    let dir = tempfile::tempdir().expect("tmp");
    let md = report(&hostile_dump(dir.path(), false), dir.path());
    // The message is in the summary, the timeline (Events) and a condition: a table each.
    assert!(md.matches("evil.example/b").count() >= 2, "{md}");
    assert_inert("messages", &md);
}

#[test]
fn a_hostile_phase_disk_name_and_file_name_render_as_text_on_github() {
    let dir = tempfile::tempdir().expect("tmp");
    let md = report(&hostile_dump(dir.path(), true), dir.path());
    assert!(md.contains(NAME_TAIL), "the disk name is shown: {md}");
    assert_inert("phase and names", &md);
    let html = cmark_gfm(&md);
    let (codes, _) = split_code(&html);
    assert!(
        codes
            .iter()
            .any(|c| c == &format!("vm-disk-data{NAME_TAIL}")),
        "the disk name reads back exactly: {codes:#?}"
    );
}
