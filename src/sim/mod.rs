//! The Kubernetes API emulator and the scenario player.
//!
//! `Sim::start` serves the kinds of `model::kind::KINDS` (plus `SelfSubjectAccessReview`) on
//! `127.0.0.1`, with the semantics a real kube-apiserver has where restorewatch and kubectl
//! depend on them. The returned `SimHandle` gives clients, a kubeconfig, privileged access to the
//! store, runtime faults and the scenario player.

pub mod api_ops;
pub mod apply;
pub mod auth;
pub mod cli;
pub mod clock;
pub mod controllers;
pub mod crd_schema;
pub mod deployments;
pub mod discovery;
pub mod faults;
pub mod handlers;
pub mod kubeconfig;
pub mod load;
pub mod managed;
pub mod metrics;
pub mod openapi;
pub mod patch;
pub mod player;
pub mod privileged;
pub mod proto;
pub mod routes;
pub mod scenario;
pub mod schema;
pub mod selectors;
pub mod server;
pub mod status;
pub mod store;
pub mod table;
pub mod watch;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use tokio::task::JoinHandle;

pub use api_ops::{DeleteOptions, Deleted, Part, Propagation};
pub use auth::{Policy, Rule};
pub use faults::{FaultHandle, FaultSpec};
pub use patch::PatchKind;
pub use scenario::{Scenario, ScenarioRun, ScenarioStatus};
pub use status::ApiError;
pub use store::Store;

/// kube-apiserver's watch cache sends a bookmark about once a minute
/// (`apiserver-behaviour.md`: "not at once").
pub const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// kube-apiserver's default `--min-request-timeout`.
pub const DEFAULT_MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);

/// How to start the emulator. `Default` gives: any free port, no authentication, no faults,
/// bookmarks every minute (as kube-apiserver sends them), watches without `timeoutSeconds`
/// ended after 30 to 60 minutes (its `--min-request-timeout` of 1800 s), 1000 changes of
/// history per kind, the controller manager on.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// 0 = any free port.
    pub port: u16,
    /// Bearer token -> policy. Empty (and no `anonymous`) = authentication off.
    pub tokens: HashMap<String, Policy>,
    /// Policy for requests without a token (user `system:anonymous`); `None` = they get 401
    /// when tokens are configured.
    pub anonymous: Option<Policy>,
    pub faults: FaultSpec,
    /// How often a watch that asked for bookmarks (`allowWatchBookmarks`) gets one; it also
    /// gets one 2 s before its timeout (see `watch::next_bookmark`).
    pub bookmark_interval: Duration,
    /// A watch without `timeoutSeconds` (or with 0) ends after a random time between this and
    /// twice this, as kube-apiserver's `--min-request-timeout` makes it.
    pub min_request_timeout: Duration,
    /// Changes kept per kind for watch resume; older versions get 410 Expired.
    pub history_limit: usize,
    /// Bytes of history kept, all kinds together (`store::DEFAULT_HISTORY_BYTES`); the oldest
    /// changes go first.
    pub history_bytes: usize,
    /// Run the simulated kube-controller-manager (`controllers`): protection finalizers,
    /// garbage collector, PV binder.
    pub controller_manager: bool,
    /// How long its controllers take to react to a change (remove a protection finalizer,
    /// collect an orphan, bind a pre-bound pair).
    pub finalizer_delay: Duration,
    /// How long the PV binder waits before retrying a claim whose volume is bound to another
    /// claim (its resync; ~15 s on a real cluster). Tests set a short one.
    pub pv_resync: Duration,
    /// Seeds uid and name generation.
    pub seed: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            port: 0,
            tokens: HashMap::new(),
            anonymous: None,
            faults: FaultSpec::default(),
            bookmark_interval: DEFAULT_BOOKMARK_INTERVAL,
            min_request_timeout: DEFAULT_MIN_REQUEST_TIMEOUT,
            history_limit: 1000,
            history_bytes: store::DEFAULT_HISTORY_BYTES,
            controller_manager: true,
            finalizer_delay: Duration::from_millis(100),
            pv_resync: Duration::from_secs(15),
            seed: 0x5eed,
        }
    }
}

impl SimConfig {
    /// The PV binder's resync delay (see `pv_resync`).
    pub fn with_pv_resync(mut self, delay: Duration) -> Self {
        self.pv_resync = delay;
        self
    }

    /// How long the controllers take to react (see `finalizer_delay`).
    pub fn with_reaction_delay(mut self, delay: Duration) -> Self {
        self.finalizer_delay = delay;
        self
    }
}

pub struct Sim;

impl Sim {
    /// Binds `127.0.0.1:<port>` and serves in the current tokio runtime until the handle is
    /// shut down or dropped.
    pub async fn start(config: SimConfig) -> anyhow::Result<SimHandle> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", config.port))
            .await
            .with_context(|| format!("binding 127.0.0.1:{}", config.port))?;
        let addr = listener.local_addr()?;
        let store = Store::bounded(config.history_limit, config.history_bytes, config.seed);
        let faults = FaultHandle::new(config.faults.clone());
        let deployments = deployments::Deployments::default();
        let ctx = Arc::new(server::Ctx {
            store: store.clone(),
            auth: auth::Auth::new(config.tokens.clone(), config.anonymous.clone()),
            faults: faults.clone(),
            bookmark_interval: config.bookmark_interval.max(Duration::from_millis(10)),
            min_request_timeout: config.min_request_timeout.max(Duration::from_millis(10)),
            address: addr.to_string(),
            requests: Default::default(),
            deployments: deployments.clone(),
        });
        let kcm_on = Arc::new(AtomicBool::new(config.controller_manager));
        let (progress_tx, progress) = tokio::sync::watch::channel(controllers::Progress::default());
        let settings = controllers::Settings {
            reaction_delay: config.finalizer_delay,
            pv_resync: config.pv_resync,
        };
        let tasks = vec![
            tokio::spawn(server::serve(listener, ctx)),
            tokio::spawn(controllers::run(
                store.clone(),
                kcm_on.clone(),
                settings,
                progress_tx,
            )),
        ];
        Ok(SimHandle {
            addr,
            store,
            faults,
            kcm_on,
            progress,
            tasks,
            runs: Arc::new(Mutex::new(Vec::new())),
            deployments,
        })
    }
}

/// A running emulator. Dropping it stops the server, its watches and any scenario.
pub struct SimHandle {
    addr: SocketAddr,
    store: Store,
    faults: FaultHandle,
    kcm_on: Arc<AtomicBool>,
    progress: tokio::sync::watch::Receiver<controllers::Progress>,
    tasks: Vec<JoinHandle<()>>,
    runs: Arc<Mutex<Vec<ScenarioRun>>>,
    deployments: deployments::Deployments,
}

impl SimHandle {
    /// The apps/v1 Deployments served (only GET and list: see `deployments`).
    pub fn deployments(&self) -> &deployments::Deployments {
        &self.deployments
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// A `kube::Config` for the emulator, with a bearer token when given.
    pub fn kube_config(&self, token: Option<&str>) -> anyhow::Result<kube::Config> {
        let uri: hyper::Uri = self.url().parse().context("emulator URL")?;
        let mut config = kube::Config::new(uri);
        config.default_namespace = "default".into();
        if let Some(t) = token {
            config.auth_info.token = Some(t.to_string().into());
        }
        Ok(config)
    }

    pub fn client(&self) -> anyhow::Result<kube::Client> {
        Ok(kube::Client::try_from(self.kube_config(None)?)?)
    }

    pub fn client_with_token(&self, token: &str) -> anyhow::Result<kube::Client> {
        Ok(kube::Client::try_from(self.kube_config(Some(token))?)?)
    }

    pub fn write_kubeconfig(&self, path: &Path, token: Option<&str>) -> anyhow::Result<()> {
        kubeconfig::write(path, &self.url(), token)
    }

    pub fn faults(&self) -> &FaultHandle {
        &self.faults
    }

    /// Privileged access: `put`, `load`, `patch_object`, `patch_status`, `remove`, `compact`,
    /// and the API-semantics operations `api_*`.
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn set_controller_manager(&self, on: bool) {
        self.kcm_on.store(on, Ordering::Relaxed);
        self.store.nudge();
    }

    /// How many times the simulated controllers have woken up so far: it does not move while
    /// nothing changes (they react to changes, they do not poll).
    pub fn controller_wakeups(&self) -> u64 {
        self.progress.borrow().wakeups
    }

    /// Waits until the simulated controllers have reacted to every change made so far (and to
    /// what their own reactions changed), apart from the PV binder's resyncs; at once when they
    /// are switched off. What a test waits for before it judges an end state.
    pub async fn controllers_idle(&self) {
        let target = self.store.current_rv();
        let mut rx = self.progress.clone();
        let _ = rx
            .wait_for(|p| p.off || (p.seen_rv >= target && p.pending == 0))
            .await;
    }

    /// Starts playing a scenario; `speed` divides its step offsets.
    pub fn play(&self, scenario: Scenario, speed: f64) -> ScenarioRun {
        let run = scenario::play(self.store.clone(), self.kcm_on.clone(), scenario, speed);
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(run.clone());
        run
    }

    /// Status of every scenario started on this emulator.
    pub fn scenarios(&self) -> Vec<ScenarioStatus> {
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(ScenarioRun::status)
            .collect()
    }

    /// Stops serving and waits for the server tasks to end.
    pub async fn shutdown(mut self) {
        let tasks = std::mem::take(&mut self.tasks);
        for t in &tasks {
            t.abort();
        }
        for t in tasks {
            let _ = t.await;
        }
        self.stop_runs();
    }

    fn stop_runs(&self) {
        for r in self.runs.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            r.abort();
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        self.stop_runs();
    }
}
