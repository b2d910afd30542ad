//! An exec credential plugin never outlives restorewatch: the real binary, a kubeconfig whose
//! user runs a plugin that starts a child, records both pids and hangs; restorewatch is stopped
//! while it waits (serve by SIGTERM, check by a Ctrl-C's SIGINT, which the plugin's own process
//! group does not get from the terminal) and both pids must be gone.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A kubeconfig whose only context's user runs a hanging plugin; returns it and the pid file.
fn hanging_plugin(dir: &Path) -> (PathBuf, PathBuf) {
    let pids = dir.join("plugin.pids");
    let script = dir.join("plugin.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsleep 300 &\necho \"$$ $!\" > {}.tmp\nmv {}.tmp {}\nwait\n",
            pids.display(),
            pids.display(),
            pids.display()
        ),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let kc = dir.join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"http://127.0.0.1:9\"}}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n",
            script.display()
        ),
    )
    .expect("kubeconfig");
    (kc, pids)
}

/// The plugin's pid and its child's, once it has started (bounded wait).
fn plugin_pids(file: &Path) -> Vec<u32> {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            let pids: Vec<u32> = text
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            if pids.len() == 2 {
                return pids;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the plugin never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn running(pid: u32) -> bool {
    // A zombie has ended; only its reaper has not caught up.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .is_some_and(|s| {
            !s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
}

/// Both pids are gone (SIGKILL is delivered at once; the bound only absorbs scheduling).
fn assert_gone(pids: &[u32], what: &str) {
    let start = Instant::now();
    while pids.iter().any(|p| running(*p)) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{what}: the exec plugin (pids {pids:?}) outlived restorewatch"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stop_while_waiting(args: &[&str], signal: &str, what: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (kc, pid_file) = hanging_plugin(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(args)
        .arg("--kubeconfig")
        .arg(&kc)
        .env("XDG_STATE_HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("runs");
    let pids = plugin_pids(&pid_file);
    let kill = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let status = child.wait().expect("waits");
    assert_gone(&pids, &format!("{what} ({status})"));
}

#[test]
fn serve_stopped_by_sigterm_while_a_plugin_runs_leaves_no_plugin() {
    stop_while_waiting(
        &["serve", "--listen", "127.0.0.1:0"],
        "-TERM",
        "serve on SIGTERM",
    );
}

#[test]
fn check_interrupted_while_a_plugin_runs_leaves_no_plugin() {
    stop_while_waiting(&["check"], "-INT", "check on SIGINT");
}
