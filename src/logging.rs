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

/// Starts file logging and returns the file's path.
pub fn init() -> anyhow::Result<PathBuf> {
    let dir = state_dir().context("neither XDG_STATE_HOME nor HOME is set")?;
    let path = dir.join("restorewatch.log");
    // 0600: the log quotes cluster errors and object names.
    let opened = crate::private_file::open_append(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    let file = opened.file;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
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
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .try_init();
}
