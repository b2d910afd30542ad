//! A kubeconfig's exec credential plugin (`users[].user.exec`: a cloud CLI, kubelogin), run by
//! restorewatch rather than by kube-rs, which waits for it without limit on a blocking thread
//! and puts its whole output (the token it printed included) in its error. Here the plugin
//! gets a bounded time, is killed with everything it started when restorewatch gives up (or
//! stops waiting), and a failure says the exit status and the first line of its stderr, never
//! its stdout.

use base64::Engine as _;
use kube::config::{AuthInfo, ExecAuthCluster, ExecConfig, Kubeconfig};
use secrecy::SecretString;
use serde::Deserialize;
use std::os::unix::process::CommandExt as _;
use std::process::Stdio;
use std::time::Duration;

/// How long a plugin may take by default: a browser login needs the operator's seconds.
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the plugin gave no credential. The texts name the command, never its output.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("the exec credential plugin {cmd} could not be started: {why}")]
    Start { cmd: String, why: String },
    #[error(
        "the exec credential plugin {cmd} did not finish within {} (--exec-timeout); it and the processes it started were stopped",
        crate::cluster::errors::fmt_duration(*.after)
    )]
    TimedOut { cmd: String, after: Duration },
    #[error("the exec credential plugin {cmd} failed ({status}){}", .stderr.as_ref().map(|l| format!(": {l}")).unwrap_or_default())]
    Failed {
        cmd: String,
        status: String,
        stderr: Option<String>,
    },
    #[error(
        "the exec credential plugin {cmd} printed {bytes} bytes that are not an ExecCredential ({why}); its output is not shown, it may hold a token"
    )]
    Unreadable {
        cmd: String,
        bytes: usize,
        why: String,
    },
    #[error(
        "the exec credential plugin {cmd} printed an ExecCredential without a token or client certificate"
    )]
    NoCredential { cmd: String },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredential {
    status: Option<CredentialStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CredentialStatus {
    token: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

/// When the context's user has an exec plugin that kube-rs would run (no token, basic auth,
/// token file or auth provider before it), runs it here and puts what it printed in place of
/// the `exec` entry. `say` is told, before the wait, what is being waited for.
pub async fn resolve(
    kubeconfig: &mut Kubeconfig,
    context: &str,
    timeout: Duration,
    say: impl FnOnce(&str),
) -> Result<(), ExecError> {
    let Some(ctx) = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
    else {
        return Ok(());
    };
    let (user, cluster) = (ctx.user.clone(), ctx.cluster.clone());
    let exec_cluster = kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == cluster)
        .and_then(|c| c.cluster.as_ref())
        .and_then(|c| ExecAuthCluster::try_from(c).ok());
    let Some(auth) = kubeconfig
        .auth_infos
        .iter_mut()
        .find(|a| Some(&a.name) == user.as_ref())
        .and_then(|a| a.auth_info.as_mut())
    else {
        return Ok(());
    };
    let Some(exec) = auth.exec.clone().filter(|_| runs_exec(auth)) else {
        return Ok(());
    };
    let cmd = exec.command.clone().unwrap_or_default();
    say(&format!(
        "waiting for the exec credential plugin {cmd} (at most {}, --exec-timeout)",
        crate::cluster::errors::fmt_duration(timeout)
    ));
    let status = run(&exec, exec_cluster.as_ref(), timeout).await?;
    use_credential(auth, status, &cmd)
}

/// kube-rs's order: an auth provider, basic auth, a token and a token file all come first.
fn runs_exec(a: &AuthInfo) -> bool {
    a.auth_provider.is_none()
        && !(a.username.is_some() && a.password.is_some())
        && a.token.is_none()
        && a.token_file.is_none()
}

fn use_credential(auth: &mut AuthInfo, s: CredentialStatus, cmd: &str) -> Result<(), ExecError> {
    let b64 = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
    match (s.token, s.client_certificate_data, s.client_key_data) {
        (_, Some(cert), Some(key)) => {
            auth.client_certificate_data = Some(b64(&cert));
            auth.client_key_data = Some(SecretString::from(b64(&key)));
        }
        (Some(token), _, _) if !token.is_empty() => {
            auth.token = Some(SecretString::from(token));
        }
        _ => return Err(ExecError::NoCredential { cmd: cmd.into() }),
    }
    auth.exec = None;
    Ok(())
}

async fn run(
    exec: &ExecConfig,
    cluster: Option<&ExecAuthCluster>,
    timeout: Duration,
) -> Result<CredentialStatus, ExecError> {
    let cmd = exec.command.clone().unwrap_or_default();
    if cmd.is_empty() {
        return Err(ExecError::Start {
            cmd: "(none)".into(),
            why: "the kubeconfig's exec entry names no command".into(),
        });
    }
    let mut command = std::process::Command::new(&cmd);
    command.args(exec.args.iter().flatten());
    for e in exec.env.iter().flatten() {
        if let (Some(n), Some(v)) = (e.get("name"), e.get("value")) {
            command.env(n, v);
        }
    }
    let mut spec = serde_json::json!({"interactive": false});
    if exec.provide_cluster_info
        && let Some(c) = cluster
    {
        spec["cluster"] = serde_json::to_value(c).unwrap_or_default();
    }
    let info = serde_json::json!({
        "apiVersion": exec.api_version.as_deref().unwrap_or("client.authentication.k8s.io/v1"),
        "kind": "ExecCredential",
        "spec": spec,
    });
    command.env("KUBERNETES_EXEC_INFO", info.to_string());
    for e in exec.drop_env.iter().flatten() {
        command.env_remove(e);
    }
    // Its own process group, so that giving up stops what it started too (a browser helper,
    // a `sleep`), also when the wait is abandoned (restorewatch exiting, a `:ctx` given up).
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let child = command.spawn().map_err(|e| ExecError::Start {
        cmd: cmd.clone(),
        why: e.to_string(),
    })?;
    let group = GroupKill::new(child.id());
    // The blocking wait ends when the plugin does, or when the group is killed.
    let waiting = tokio::task::spawn_blocking(move || child.wait_with_output());
    let out = match tokio::time::timeout(timeout, waiting).await {
        Ok(joined) => joined
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|why| ExecError::Start {
                cmd: cmd.clone(),
                why,
            })?,
        Err(_) => {
            return Err(ExecError::TimedOut {
                cmd,
                after: timeout,
            });
        }
    };
    // It ended by itself: what it left running is its own business, as with kubectl.
    group.disarm();
    if !out.status.success() {
        let first = String::from_utf8_lossy(&out.stderr)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| crate::text::one_line_owned(l.chars().take(300).collect()));
        return Err(ExecError::Failed {
            cmd,
            status: out.status.to_string(),
            stderr: first,
        });
    }
    let parsed: ExecCredential =
        serde_json::from_slice(&out.stdout).map_err(|e| ExecError::Unreadable {
            cmd: cmd.clone(),
            bytes: out.stdout.len(),
            // serde_json's message names a line and column, never the text.
            why: e.to_string(),
        })?;
    parsed.status.ok_or(ExecError::NoCredential { cmd })
}

/// The process groups of the plugins being waited for. A dropped wait kills its own group, but
/// not every way of stopping drops it: `std::process::exit` (every command's end, the
/// dashboard's exit timer) runs no destructor, and a task still waiting when the process ends
/// is never dropped. Every exit path calls `kill_all`, so no plugin outlives restorewatch.
static LIVE: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<i32>> {
    // A panic while holding it leaves the list itself intact: keep using it.
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn kill_group(pgid: i32) {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; the group is the one
    // the plugin was started in (its pid), which outlives it while members remain.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// Kills every plugin still being waited for, with what it started. Called on every path that
/// ends the process.
pub fn kill_all() {
    for pgid in std::mem::take(&mut *live()) {
        kill_group(pgid);
    }
}

/// The first of SIGTERM, SIGHUP, SIGINT and SIGQUIT (its number), for a command that waits
/// (on a plugin among others) before it has handlers of its own; never, when they cannot be
/// watched.
pub async fn termination_signal() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let mut waits = Vec::new();
    for k in [
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::interrupt(),
        SignalKind::quit(),
    ] {
        match signal(k) {
            Ok(mut s) => {
                let n = k.as_raw_value();
                waits.push(Box::pin(async move {
                    s.recv().await;
                    n
                }));
            }
            Err(e) => tracing::warn!("cannot watch signal {}: {e}", k.as_raw_value()),
        }
    }
    if waits.is_empty() {
        return std::future::pending().await;
    }
    futures::future::select_all(waits).await.0
}

/// Kills the plugin's process group when dropped: on a timeout, or when the wait itself is
/// abandoned (`:ctx` to another context, a signal while connecting).
struct GroupKill(Option<i32>);

impl GroupKill {
    fn new(pid: u32) -> GroupKill {
        let pgid = i32::try_from(pid).ok();
        if let Some(g) = pgid {
            live().push(g);
        }
        GroupKill(pgid)
    }

    /// The plugin ended by itself: nothing to kill.
    fn disarm(mut self) {
        if let Some(g) = self.0.take() {
            live().retain(|p| *p != g);
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        if let Some(g) = self.0.take() {
            live().retain(|p| *p != g);
            kill_group(g);
        }
    }
}
