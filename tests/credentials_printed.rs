//! Credentials of the connection itself never printed, logged or served: a password in the
//! kubeconfig's server URL, and what an exec credential plugin prints; and a plugin that never
//! returns is stopped, with what it started, within `--exec-timeout`.

mod serve_support;

use restorewatch::sim::{Policy, Sim, SimConfig};
use serve_support::{get, start_serve};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// A kubeconfig whose one context uses `server` and the user entry `user` (YAML).
fn kubeconfig(dir: &Path, server: &str, user: &str) -> PathBuf {
    let q = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n\
         users:\n- name: u\n  user:\n{user}\ncontexts:\n- name: ctx\n  context:\n    cluster: c\n    user: u\n\
         current-context: ctx\n",
        q(server)
    );
    let path = dir.join("kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

/// `restorewatch check` on `kc`, its state (logs) under `dir/state`.
fn check(dir: &Path, kc: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(["check", "--kubeconfig"])
        .arg(kc)
        .args(["--fail-on", "never", "--request-timeout", "10s"])
        .args(extra)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("RUST_LOG", "debug")
        .env("NO_COLOR", "1")
        .output()
        .expect("restorewatch runs")
}

/// Everything a run left for a person to read: its output and every file under `dir/state`.
fn everything_said(dir: &Path, out: &Output) -> String {
    let mut all = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut stack = vec![dir.join("state")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                all.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    all
}

const SERVER_PW: &str = "PW-in-server-url";

#[test]
fn a_password_in_the_server_url_is_not_in_the_error_of_a_refused_connection() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!("http://admin:{SERVER_PW}@127.0.0.1:{}", free_port());
    let kc = kubeconfig(dir.path(), &server, "    token: t");
    let out = check(dir.path(), &kc, &[]);
    let said = everything_said(dir.path(), &out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("connection refused"), "{said}");
    assert!(!said.contains(SERVER_PW), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_in_the_server_url_is_not_in_check_serve_logs_or_readyz() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let server = sim
        .url()
        .replace("http://", &format!("http://admin:{SERVER_PW}@"));
    let kc = kubeconfig(dir.path(), &server, "    token: t");
    let out = tokio::task::spawn_blocking({
        let (d, kc) = (dir.path().to_path_buf(), kc.clone());
        move || check(&d, &kc, &[])
    })
    .await
    .unwrap();
    let said = everything_said(dir.path(), &out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(!said.contains(SERVER_PW), "{said}");

    let state = dir.path().join("state");
    let serve = start_serve(&kc, &[], &[("XDG_STATE_HOME", &state)]);
    let addr = serve.addr.clone();
    let ready = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        loop {
            if let Some((200, body)) = get(&addr, "/readyz") {
                return body;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "never ready");
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
    .unwrap();
    assert!(ready.contains("127.0.0.1"), "{ready}");
    assert!(!ready.contains(SERVER_PW), "{ready}");
    let log = serve.stderr.lock().unwrap().clone();
    assert!(log.contains("listening on"), "{log}");
    assert!(!log.contains(SERVER_PW), "{log}");
    drop(serve);
    sim.shutdown().await;
}

/// An executable shell script in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn exec_user(plugin: &Path) -> String {
    format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never",
        serde_json::Value::String(plugin.display().to_string())
    )
}

fn credential(token: &str) -> String {
    format!(
        r#"{{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{{"token":"{token}"}}}}"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_plugins_token_is_used_and_never_printed_when_it_fails() {
    let mut cfg = SimConfig::default();
    cfg.tokens.insert(
        "TOKEN-from-plugin".into(),
        Policy::builtin("readonly").unwrap(),
    );
    let sim = Sim::start(cfg).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let url = sim.url();
    let (good, failed, trailing) = tokio::task::spawn_blocking(move || {
        let run = |name: &str, body: &str| {
            let kc = kubeconfig(&d, &url, &exec_user(&script(&d, name, body)));
            let out = check(&d, &kc, &[]);
            let said = everything_said(&d, &out);
            (out.status.code(), said)
        };
        (
            run("good.sh", &format!("echo '{}'", credential("TOKEN-from-plugin"))),
            run(
                "failed.sh",
                &format!(
                    "echo '{}'\necho 'login expired: run az login' >&2\necho 'second line' >&2\nexit 3",
                    credential("TOKEN-printed-then-failed")
                ),
            ),
            run(
                "trailing.sh",
                &format!(
                    "echo '{}'\necho 'update available TOKEN-after-json'",
                    credential("TOKEN-before-trailing-text")
                ),
            ),
        )
    })
    .await
    .unwrap();
    // The plugin's token is what the server sees: the readonly user lists everything.
    assert_eq!(good.0, Some(0), "{}", good.1);

    assert_eq!(failed.0, Some(2), "{}", failed.1);
    assert!(
        failed.1.contains("exit status: 3") && failed.1.contains("login expired: run az login"),
        "{}",
        failed.1
    );
    assert!(
        !failed.1.contains("TOKEN-printed-then-failed"),
        "{}",
        failed.1
    );
    assert!(!failed.1.contains("second line"), "{}", failed.1);

    assert_eq!(trailing.0, Some(2), "{}", trailing.1);
    assert!(
        trailing.1.contains("not an ExecCredential"),
        "{}",
        trailing.1
    );
    for t in ["TOKEN-before-trailing-text", "TOKEN-after-json"] {
        assert!(!trailing.1.contains(t), "{}", trailing.1);
    }
    sim.shutdown().await;
}

fn alive(pid: &str) -> bool {
    // A zombie has exited: only its parent's wait is missing.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| !r.starts_with('Z')))
        .unwrap_or(false)
}

#[test]
fn a_plugin_that_never_returns_is_stopped_with_its_children_within_exec_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let plugin = script(
        dir.path(),
        "hang.sh",
        &format!(
            "sleep 1000 &\necho $! >> {p}\necho $$ >> {p}\nwait",
            p = pids.display()
        ),
    );
    let server = format!("http://127.0.0.1:{}", free_port());
    let kc = kubeconfig(dir.path(), &server, &exec_user(&plugin));
    // Long enough for a loaded machine to start the script and its child; the plugin itself
    // would wait 1000 s.
    let out = check(dir.path(), &kc, &["--exec-timeout", "3s"]);
    let said = everything_said(dir.path(), &out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("waiting for the exec credential plugin"),
        "said while waiting: {said}"
    );
    assert!(said.contains("did not finish within 3s"), "{said}");
    let pids = std::fs::read_to_string(&pids).expect("the plugin wrote its pids");
    let pids: Vec<&str> = pids.lines().collect();
    assert_eq!(pids.len(), 2, "{pids:?}");
    let start = Instant::now();
    while pids.iter().any(|p| alive(p)) && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    for p in &pids {
        assert!(!alive(p), "plugin process {p} is still running");
    }
}
