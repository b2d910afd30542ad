//! Logs go to a file, never to the screen the dashboard draws on:
//! `$XDG_STATE_HOME/restorewatch/restorewatch.log` (else `~/.local/state/restorewatch/`), level
//! from `RUST_LOG` (default `info`).

use anyhow::Context;
use std::path::PathBuf;
use std::sync::Mutex;
use tracing_subscriber::EnvFilter;

pub fn state_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state"))
        })?;
    Some(base.join("restorewatch"))
}

/// `RUST_LOG`, else `info`. kube's client logs every failed request (three a second per watch
/// while a server is gone) and its watcher every 403: the live watches log one line when each
/// goes down and one when it is back instead (`cluster::watch_log`), so kube's own are off
/// unless `RUST_LOG` names them.
fn filter() -> EnvFilter {
    let asked = std::env::var("RUST_LOG").unwrap_or_default();
    let mut filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    for (krate, target) in [
        ("kube_client", "kube_client::client"),
        ("kube_runtime", "kube_runtime::watcher"),
    ] {
        if !asked.contains(krate)
            && let Ok(d) = format!("{target}=off").parse()
        {
            filter = filter.add_directive(d);
        }
    }
    filter
}

/// Starts file logging and returns the file's path.
pub fn init() -> anyhow::Result<PathBuf> {
    let dir = state_dir().context("neither XDG_STATE_HOME nor HOME is set")?;
    let path = dir.join("restorewatch.log");
    // 0600: the log quotes cluster errors and object names.
    let opened = crate::private_file::open_append(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    let file = opened.file;
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init()
        .map_err(|e| anyhow::anyhow!("logging already set up: {e}"))?;
    if let Some(n) = opened.notice {
        tracing::warn!("{n}");
    }
    Ok(path)
}

/// Headless commands (`serve`) have no screen to protect: they log to stderr, where a container
/// runtime collects it.
pub fn init_stderr() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .try_init();
}
