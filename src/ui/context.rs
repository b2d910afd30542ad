//! `:ctx NAME`: switching the dashboard to another kubeconfig context in place. A `Session` is
//! one context's live watches and action client; switching connects the new one off the draw
//! loop, then swaps it in whole and drops the old one, which stops the old context's watches.
//! The frames of two contexts are never mixed: the screen empties until the new one syncs.

use super::action_worker::ActionBackend;
use super::app::App;
use super::update::{Msg, update};
use crate::analysis::Settings;
use crate::cluster::client;
use crate::pipeline::FrameRx;
use crate::pipeline::live::{self, LiveOptions, LiveSource};
use anyhow::Context;
use std::path::PathBuf;

/// What stays the same across contexts: where the kubeconfig is, the watch scope, the
/// analysis settings and whether actions are allowed at all.
#[derive(Debug, Clone)]
pub struct Connector {
    pub kubeconfig: Option<PathBuf>,
    /// `None` watches every namespace.
    pub namespace: Option<String>,
    pub settings: Settings,
    pub readonly: bool,
    /// Request, connect and watch timeouts, the same for every context.
    pub timeouts: client::Timeouts,
}

/// One context being watched. Dropping it stops its watches.
pub struct Session {
    pub context: String,
    pub frames: FrameRx,
    /// The API server's URL, for "connecting to …".
    pub server: String,
    /// The action client for this context; `None` in a read-only session.
    pub backend: Option<ActionBackend>,
    _source: LiveSource,
}

impl Connector {
    /// Connects to `context` (the kubeconfig's current one when `None`) and starts watching.
    pub async fn connect(&self, context: Option<&str>) -> anyhow::Result<Session> {
        let args = client::ConnectOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: context.map(str::to_string),
            namespace: self.namespace.clone(),
            timeouts: self.timeouts,
            announce: false,
        };
        let conn = client::connect_with(&args, self.timeouts).await?;
        tracing::info!(context = %conn.context, cluster = %conn.cluster_url, "watching");
        let backend = (!self.readonly).then(|| ActionBackend {
            client: conn.client.clone(),
            user: conn.user.clone(),
            context: conn.context.clone(),
            server: conn.cluster_url.clone(),
        });
        // The watches get the client whose read timeout notices a silent stream.
        let source = live::start_watching(
            conn.watch_client,
            LiveOptions {
                namespace: self.namespace.clone(),
                context: conn.context.clone(),
                cluster: conn.cluster_url,
                settings: self.settings.clone(),
            },
            live::WatchOptions {
                timeouts: conn.timeouts,
                endpoint: Some(conn.endpoint.clone()),
            },
        );
        Ok(Session {
            server: conn.endpoint.server,
            context: conn.context,
            frames: source.frames.clone(),
            backend,
            _source: source,
        })
    }

    /// The kubeconfig's context names, for `:ctx` completion.
    pub fn contexts(&self) -> anyhow::Result<Vec<String>> {
        let kc = match &self.kubeconfig {
            Some(p) => kube::config::Kubeconfig::read_from(p)
                .with_context(|| format!("cannot read kubeconfig {}", p.display()))?,
            None => kube::config::Kubeconfig::read().context("cannot read a kubeconfig")?,
        };
        let mut names: Vec<String> = kc.contexts.into_iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        Ok(names)
    }
}

/// A connection being made in the background; dropping it abandons it, and the abandoned
/// wait kills the exec credential plugin it may be waiting for (a later `:ctx` won, or the
/// dashboard ended).
pub struct Connecting(tokio::task::JoinHandle<()>);

impl Drop for Connecting {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Connects to `name` in the background; the answer arrives on `tx` with the name.
pub fn spawn_connect(
    connector: &Connector,
    name: String,
    tx: tokio::sync::mpsc::UnboundedSender<(String, anyhow::Result<Session>)>,
) -> Connecting {
    let connector = connector.clone();
    Connecting(tokio::spawn(async move {
        let result = connector.connect(Some(&name)).await;
        // The loop may be gone (quit while connecting): nothing to tell.
        let _ = tx.send((name, result));
    }))
}

/// Takes the answer of a connection started for `name`: on success the new session replaces
/// `current` (the old one is dropped here, so its watches stop) and the app shows the new
/// context's first frame. Returns whether the session changed. An answer for a context that
/// is no longer the one asked for (a later `:ctx` won) is dropped.
pub fn install(
    app: &mut App,
    current: &mut Session,
    name: String,
    result: anyhow::Result<Session>,
) -> bool {
    if app.switching.as_deref() != Some(name.as_str()) {
        return false;
    }
    match result {
        Ok(session) => {
            let backend = session.backend.clone();
            let old = std::mem::replace(current, session);
            drop(old);
            update(
                app,
                Msg::ContextSwitched {
                    context: name,
                    result: Ok(backend),
                },
            );
            let first = current.frames.borrow_and_update().clone();
            update(app, Msg::Frame(first));
            true
        }
        Err(e) => {
            update(
                app,
                Msg::ContextSwitched {
                    context: name,
                    result: Err(format!("{e:#}")),
                },
            );
            false
        }
    }
}
