//! `restorewatch serve`: the live pipeline without a terminal, for Prometheus and alerting.
//! Read-only by construction: it holds no action backend and its endpoints only read frames.

pub mod bodies;
mod controller_metric;
pub mod http;
pub mod metrics;
pub mod readiness;
pub mod write_deadline;

use crate::analysis::Settings;
use crate::args::ClusterArgs;
use crate::cluster::client;
use crate::pipeline::live;
use std::net::SocketAddr;
use std::sync::Arc;

/// Where the findings reference is published; alerts link to `<base>#<code>`.
pub const DEFAULT_DOCS_BASE: &str = "docs/findings.md";

#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Address to serve /metrics, /healthz, /readyz and /report on (port 0: any free port)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9917")]
    pub listen: SocketAddr,
    /// Where docs/findings.md is published; each finding's metric links to <URL>#<code>
    #[arg(long, value_name = "URL", default_value = DEFAULT_DOCS_BASE)]
    pub docs_url: String,
    /// How long a Running restore may go without change before it counts as stalled
    #[arg(long, value_name = "DURATION", value_parser = crate::args::parse_duration)]
    pub stall_after: Option<jiff::SignedDuration>,
    /// Answer /report with 404: only metrics and probes (the report names restores, objects
    /// and their recent changes to anyone who can reach the port)
    #[arg(long)]
    pub no_report: bool,
    /// Restores of one namespace exported with series of their own (findings first, then
    /// running, then newest); the rest are counted in restorewatch_restores_not_exported
    #[arg(long, value_name = "N", default_value_t = metrics::DEFAULT_RESTORES_PER_NAMESPACE)]
    pub restores_per_namespace: usize,
}

pub async fn run(args: ServeArgs) -> anyhow::Result<i32> {
    crate::logging::init_stderr();
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr()?;
    // Installed before connecting: a pod stopped while an exec credential plugin is waited for
    // stops the wait (and the plugin, with the dropped wait) instead of dying around it.
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    let conn = tokio::select! {
        c = client::connect(&args.cluster) => c?,
        () = &mut shutdown => {
            tracing::info!("serve: stopped while connecting");
            return Ok(crate::exit::OK);
        }
    };
    let mut settings = Settings::default();
    if let Some(d) = args.stall_after {
        settings.stall_after = d;
    }
    let source_name = format!("context {} ({})", conn.context, conn.cluster_url);
    let watch = live::WatchOptions {
        timeouts: conn.timeouts,
        endpoint: Some(conn.endpoint.clone()),
    };
    // The watch client: its read timeout is the watches' idle limit, not the request timeout.
    let source = live::start_watching(
        conn.watch_client,
        live::LiveOptions {
            namespace: if args.cluster.all_namespaces {
                None
            } else {
                args.cluster.namespace.clone()
            },
            context: conn.context,
            cluster: conn.cluster_url,
            settings,
        },
        watch,
    );
    let mut state = http::State::new(
        source.frames.clone(),
        args.docs_url.clone(),
        source_name.clone(),
        http::Limits::default(),
    );
    state.report = !args.no_report;
    state.restores_per_namespace = args.restores_per_namespace;
    let state = Arc::new(state);
    // Scripts and tests read the bound address (port 0 picks one) from this line.
    eprintln!("restorewatch serve: listening on http://{addr} for {source_name}");
    tracing::info!(%addr, source = %source_name, "serving");
    let server = tokio::spawn(http::serve(listener, state));
    shutdown.await;
    tracing::info!("serve: shutting down");
    server.abort();
    drop(source);
    Ok(crate::exit::OK)
}

/// SIGTERM (a pod being stopped) and SIGINT end the server; both are a normal stop.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("cannot watch SIGTERM: {e}");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
