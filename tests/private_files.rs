//! The files restorewatch writes are its user's alone: the audit of actions and the emulator's
//! kubeconfig are 0600, and one left readable by others is tightened. (The log is checked where
//! the dashboard writes it, in `e2e_tmux.rs`.)

#![cfg(unix)]

use restorewatch::actions::audit::{AuditLine, append};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn line() -> AuditLine {
    AuditLine {
        time: "2026-11-20T10:00:00Z".into(),
        user: "alice".into(),
        authenticated: restorewatch::actions::audit::Identity::Unknown {
            unknown: "not asked".into(),
        },
        context: "prod".into(),
        server: "https://prod.example:6443".into(),
        kube_system_uid: None,
        restore_uid: String::new(),
        action: "resume-rename".into(),
        target: "restore tenant-a/restore-test".into(),
        operation: "patch pv".into(),
        precondition: "resourceVersion 1".into(),
        outcome: "done".into(),
    }
}

#[test]
fn the_audit_is_created_0600_and_a_readable_one_is_tightened() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("state/restorewatch/audit.jsonl");
    append(&path, &line()).unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    append(&path, &line()).unwrap();
    assert_eq!(mode(&path), 0o600, "an audit left 0644 is tightened");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().lines().count(),
        2,
        "and nothing in it is lost"
    );
}

/// `sim serve --write-kubeconfig` over a file that was world-readable: the token it may hold is
/// not left readable.
#[test]
fn sim_serve_writes_its_kubeconfig_0600() {
    let d = tempfile::tempdir().unwrap();
    for before in [None, Some(0o644)] {
        let kc = d.path().join(format!("sim-{before:?}.kubeconfig"));
        if let Some(m) = before {
            std::fs::write(&kc, "old").unwrap();
            std::fs::set_permissions(&kc, std::fs::Permissions::from_mode(m)).unwrap();
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
            .args(["sim", "serve", "--port", "0", "--token", "t0k=admin"])
            .arg("--write-kubeconfig")
            .arg(&kc)
            .env("XDG_STATE_HOME", d.path().join("state"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary runs");
        let out = child.stdout.take().unwrap();
        let written = BufReader::new(out)
            .lines()
            .map_while(Result::ok)
            .any(|l| l.starts_with("kubeconfig written to"));
        let m = mode(&kc);
        let text = std::fs::read_to_string(&kc).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert!(written, "sim serve says where the kubeconfig is");
        assert!(text.contains("t0k"), "{text}");
        assert_eq!(m, 0o600, "kubeconfig mode (existing: {before:?})");
    }
}
