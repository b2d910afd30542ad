//! The command line as scripts use it: exit codes, the JSON document, usage errors.

use std::process::Command;

fn rw(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const INCIDENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/incident/monday-morning.yaml"
);
const HEALTHY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/healthy/vm-postfix-succeeded.yaml"
);

#[test]
fn check_exit_codes_follow_fail_on() {
    let (code, out, _) = rw(&[
        "check",
        "--snapshot",
        INCIDENT,
        "--now",
        "2026-11-20T10:30:00Z",
    ]);
    assert_eq!(
        code, 1,
        "an error finding fails the default --fail-on error"
    );
    assert!(
        out.contains("rename-half-done") && out.contains("remedy:"),
        "{out}"
    );
    let (code, _, _) = rw(&[
        "check",
        "--snapshot",
        INCIDENT,
        "--now",
        "2026-11-20T10:30:00Z",
        "--fail-on",
        "never",
    ]);
    assert_eq!(code, 0);
    let (code, _, _) = rw(&["check", "--snapshot", "/nonexistent/dump.yaml"]);
    assert_eq!(code, 2, "unreadable input is exit 2");
    let (code, _, err) = rw(&["check", "--snapshot", INCIDENT, "--now", "yesterday"]);
    assert_eq!(code, 2, "bad usage is exit 2: {err}");
}

#[test]
fn check_json_is_one_document_with_the_documented_keys() {
    let (_, out, _) = rw(&[
        "check",
        "--snapshot",
        INCIDENT,
        "--now",
        "2026-11-20T10:30:00Z",
        "-o",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).expect("exactly one JSON document");
    let r = &doc["restores"][0];
    for key in [
        "namespace",
        "name",
        "uid",
        "driver",
        "target",
        "inPlace",
        "phase",
        "steps",
    ] {
        assert!(r.get(key).is_some(), "restore lacks {key}: {r}");
    }
    let f = &doc["findings"][0];
    for key in [
        "code", "severity", "restore", "objects", "message", "remedy", "action", "stale",
    ] {
        assert!(f.get(key).is_some(), "finding lacks {key}: {f}");
    }
    let sev: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["severity"].as_str().unwrap())
        .collect();
    let rank = |s: &str| {
        ["error", "warning", "info"]
            .iter()
            .position(|x| *x == s)
            .unwrap()
    };
    assert!(
        sev.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
        "sorted by severity: {sev:?}"
    );
}

#[test]
fn a_healthy_dump_passes_even_on_warnings() {
    let now = "2026-11-20T10:40:00Z";
    let (code, out, _) = rw(&[
        "check",
        "--snapshot",
        HEALTHY,
        "--now",
        now,
        "--fail-on",
        "warning",
    ]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn stdin_and_usage_errors() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args([
            "check",
            "--snapshot",
            "-",
            "--now",
            "2026-11-20T10:30:00Z",
            "-o",
            "json",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(INCIDENT).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("servername-reverted"));

    let (code, _, err) = rw(&["action", "resume-rename"]);
    assert_eq!(code, 2, "an action needs a target: {err}");
    let (code, _, err) = rw(&["action", "rename-everything", "--restore", "a/b"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("resume-rename"),
        "names the actions there are: {err}"
    );
}

#[test]
fn help_and_completions() {
    let (code, out, _) = rw(&["--help"]);
    assert_eq!(code, 0);
    for cmd in ["check", "demo", "action", "sim", "completions"] {
        assert!(out.contains(cmd), "--help lists {cmd}");
    }
    let (code, out, _) = rw(&["completions", "bash"]);
    assert_eq!(code, 0);
    assert!(out.contains("_restorewatch()"));
}
