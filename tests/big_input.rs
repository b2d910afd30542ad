//! Big or hostile input is bounded: a size limit stops endless or oversized input with exit 2
//! and a message; invalid UTF-8 in one document is reported with its place while the others
//! are analysed.

use restorewatch::cluster::files::load_bytes;
use std::io::Write;
use std::process::{Command, Stdio};

fn rw(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn pv(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: {name}\nspec:\n  persistentVolumeReclaimPolicy: Delete\n"
    )
}

#[test]
fn dev_zero_is_refused_at_once() {
    let (code, _, err) = rw(&["check", "--snapshot", "/dev/zero"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("/dev/zero") && err.contains("NUL"),
        "says what is wrong with the input: {err}"
    );
}

#[test]
fn an_endless_stdin_stops_at_the_input_limit() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(["check", "--snapshot", "-", "--max-input", "2MiB"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    // Valid YAML, forever, until the reader hangs up.
    let writer = std::thread::spawn(move || {
        let doc = format!("---\n{}", pv("pv-x"));
        while stdin.write_all(doc.as_bytes()).is_ok() {}
    });
    let out = child.wait_with_output().expect("exits");
    writer.join().expect("writer");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("<stdin>") && err.contains("2MiB") && err.contains("--max-input"),
        "names the limit and how to raise it: {err}"
    );
}

#[test]
fn a_file_over_the_limit_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("dump.yaml");
    let text: String = (0..2000)
        .map(|i| format!("---\n{}", pv(&format!("pv-{i}"))))
        .collect();
    std::fs::write(&path, &text).expect("write");
    let p = path.display().to_string();
    let (code, _, err) = rw(&["check", "--snapshot", &p, "--max-input", "64KiB"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&p) && err.contains("64KiB"), "{err}");
    // Under the limit the same file is read.
    let (code, _, err) = rw(&["check", "--snapshot", &p, "--max-input", "1MiB"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn invalid_utf8_in_one_yaml_document_is_reported_and_the_others_are_read() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(pv("pv-a").as_bytes());
    bytes.extend_from_slice(b"---\n");
    bytes.extend_from_slice(
        b"apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv-\xff\xfe\n",
    );
    bytes.extend_from_slice(b"---\n");
    bytes.extend_from_slice(pv("pv-c").as_bytes());
    let loaded = load_bytes(&bytes, "dump.yaml");
    let names: Vec<_> = loaded
        .objects
        .iter()
        .map(|o| o.meta().name.clone())
        .collect();
    assert_eq!(names, ["pv-a", "pv-c"]);
    assert_eq!(loaded.problems.len(), 1, "{:?}", loaded.problems);
    let text = loaded.problems[0].to_string();
    assert!(
        text.starts_with("dump.yaml: document 2 (line 8)")
            && text.contains("invalid UTF-8 at line 11, column 12"),
        "{text}"
    );

    // The same through check: reported on stderr, the rest analysed, exit 0.
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("dump.yaml");
    std::fs::write(&path, &bytes).expect("write");
    let p = path.display().to_string();
    let (code, _, err) = rw(&["check", "--snapshot", &p]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("invalid UTF-8 at line 11"), "{err}");
}

#[test]
fn invalid_utf8_in_one_item_of_a_json_list_skips_that_item_only() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(br#"{"apiVersion":"v1","items":["#);
    bytes.extend_from_slice(
        br#"{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-a"}},"#,
    );
    bytes.extend_from_slice(b"\n{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-\xc3\"}},");
    bytes.extend_from_slice(
        br#"{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-c"}}"#,
    );
    bytes.extend_from_slice(br#"],"kind":"List"}"#);
    let loaded = load_bytes(&bytes, "dump.json");
    let names: Vec<_> = loaded
        .objects
        .iter()
        .map(|o| o.meta().name.clone())
        .collect();
    assert_eq!(names, ["pv-a", "pv-c"]);
    assert_eq!(loaded.problems.len(), 1, "{:?}", loaded.problems);
    let text = loaded.problems[0].to_string();
    assert!(
        text.starts_with("dump.json: invalid UTF-8 at line 2, column 69"),
        "{text}"
    );
}

#[test]
fn a_json_list_streams_items_of_every_shape() {
    // kubectl prints `kind` after `items`; a typed list's items take it from there.
    let text = r#"{"apiVersion":"v1","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],"kind":"PersistentVolumeList","metadata":{}}
[{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"c"}}]
{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"d"}}"#;
    let loaded = load_bytes(text.as_bytes(), "f");
    let names: Vec<_> = loaded
        .objects
        .iter()
        .map(|o| o.meta().name.clone())
        .collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
}
