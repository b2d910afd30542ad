//! Connecting to a cluster the way kubectl does: `--kubeconfig`, `$KUBECONFIG`, `--context`,
//! with timeouts on every request so that a frozen API server never hangs a command.

use super::errors::{CaSource, Endpoint, server_name};
use crate::model::KindInfo;
use anyhow::Context as _;
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use std::path::PathBuf;
use std::time::Duration;

/// Defaults that suit a slow cluster: a LIST of 20,000 objects over a VPN takes seconds, but a
/// server that sends nothing at all for half a minute is not going to answer.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The `timeoutSeconds` of each watch: the server ends the stream then and it is reopened. A
/// watch silent (no event, no bookmark, no end) for this plus `WATCH_MARGIN` counts as down.
pub const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(60);
pub const WATCH_MARGIN: Duration = Duration::from_secs(15);

/// Where and how to connect: plain values, so that the sources know nothing of the command
/// line (the CLI's `ClusterArgs` converts into this).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectOptions {
    /// `None`: `$KUBECONFIG`, then `~/.kube/config`, then the pod's service account.
    pub kubeconfig: Option<PathBuf>,
    /// `None`: the kubeconfig's current context.
    pub context: Option<String>,
    /// `None`: all namespaces.
    pub namespace: Option<String>,
    pub timeouts: Timeouts,
    /// Say on stderr what a connection waits for (an exec credential plugin): the commands
    /// do, the dashboard (whose screen stderr would break) logs it only.
    pub announce: bool,
}

/// How long to wait for what, on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Longest silence while waiting for the answer to an ordinary request; `None`: forever.
    pub request: Option<Duration>,
    pub connect: Option<Duration>,
    /// The `timeoutSeconds` of each watch.
    pub watch: Duration,
    /// Added to `watch`: the longest silence a watch may keep before it counts as down.
    pub watch_margin: Duration,
    /// The longest an exec credential plugin may take.
    pub exec: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            request: Some(DEFAULT_REQUEST_TIMEOUT),
            connect: Some(DEFAULT_CONNECT_TIMEOUT),
            watch: DEFAULT_WATCH_TIMEOUT,
            watch_margin: WATCH_MARGIN,
            exec: super::exec_plugin::DEFAULT_EXEC_TIMEOUT,
        }
    }
}

impl Timeouts {
    /// A watch that sent nothing (no event, no bookmark, no end of stream) for this long is
    /// dead: the server would have ended it at `watch` seconds.
    pub fn watch_idle(&self) -> Duration {
        self.watch + self.watch_margin
    }
}

/// The field manager of every write restorewatch makes: the API server records it in
/// managedFields, so that its own writes are never taken for the backup controller's (without
/// it a real server records `unknown`).
pub const FIELD_MANAGER: &str = "restorewatch";

/// `restorewatch/<version>`: sent with every request, so that the server's audit log names the
/// tool and a write that somehow lacks `fieldManager` is still recorded as `restorewatch`.
pub const USER_AGENT: &str = concat!("restorewatch/", env!("CARGO_PKG_VERSION"));

/// Every request carries `USER_AGENT` (kube-rs sends none of its own).
fn identify(config: &mut kube::Config) {
    let ua = hyper::header::USER_AGENT;
    config.headers.retain(|(name, _)| *name != ua);
    config
        .headers
        .push((ua, hyper::header::HeaderValue::from_static(USER_AGENT)));
}

/// A client for ordinary requests: connect and read timeouts, and no hidden retries (the
/// callers retry what is safe to retry, within a bounded time, and say so).
pub fn request_client(mut config: kube::Config, t: &Timeouts) -> Result<Client, kube::Error> {
    identify(&mut config);
    config.connect_timeout = t.connect;
    config.read_timeout = t.request;
    // Count the read timeout from when the request is sent, not from when its pooled
    // connection went idle.
    config.reset_reader_on_write = true;
    config.default_retry = false;
    Client::try_from(config)
}

/// A client for watches: its read timeout is the watch's idle limit, so that a stream on which
/// the server went silent ends with an error (the kind shows down and the watch is rebuilt)
/// instead of looking healthy for minutes. The initial LIST waits at least the request timeout.
pub fn watch_client(mut config: kube::Config, t: &Timeouts) -> Result<Client, kube::Error> {
    identify(&mut config);
    config.connect_timeout = t.connect;
    config.read_timeout = Some(
        t.watch_idle()
            .max(t.request.unwrap_or(DEFAULT_REQUEST_TIMEOUT)),
    );
    config.reset_reader_on_write = true;
    config.default_retry = false;
    Ok(kube::client::ClientBuilder::try_from(config)?
        .with_layer(&tower::util::MapRequestLayer::new(
            close_after_list as fn(_) -> _,
        ))
        .build())
}

/// Asks the server to close the connection after a LIST (a GET that is not a watch): hyper
/// keeps a connection's read buffer at the largest size a response needed (~400 KiB after a
/// page of 500 objects), and the watch that follows a list would otherwise inherit that
/// connection from the pool and hold the buffer for the whole session: 3.7 MB on the real
/// server's 20k-object dump (heaptrack, issue 28). Each list page then opens its own
/// connection, which a first sync or a relist pays once per page.
fn close_after_list(
    mut req: hyper::Request<kube::client::Body>,
) -> hyper::Request<kube::client::Body> {
    if is_list(req.method(), req.uri().query()) {
        req.headers_mut().insert(
            hyper::header::CONNECTION,
            hyper::header::HeaderValue::from_static("close"),
        );
    }
    req
}

fn is_list(method: &hyper::Method, query: Option<&str>) -> bool {
    method == hyper::Method::GET
        && !query
            .unwrap_or("")
            .split('&')
            .any(|p| p == "watch=true" || p == "watch=1")
}

/// A client plus the names the header shows.
pub struct Connection {
    /// For lists, reads and writes.
    pub client: Client,
    /// For the dashboard's watches (see `watch_client`).
    pub watch_client: Client,
    pub context: String,
    /// The server, without userinfo (see `server_name`): safe to print.
    pub cluster_url: String,
    /// The kubeconfig user, for the audit log.
    pub user: String,
    /// What error messages say about the server.
    pub endpoint: Endpoint,
    pub timeouts: Timeouts,
}

pub async fn connect(opts: impl Into<ConnectOptions>) -> anyhow::Result<Connection> {
    let opts = opts.into();
    connect_with(&opts, opts.timeouts).await
}

/// `connect`, with the timeouts given apart from `args` (the dashboard keeps them across
/// `:ctx` switches).
pub async fn connect_with(args: &ConnectOptions, timeouts: Timeouts) -> anyhow::Result<Connection> {
    if let Some(conn) = in_cluster(args, timeouts)? {
        return Ok(conn);
    }
    let mut kubeconfig = match &args.kubeconfig {
        Some(p) => Kubeconfig::read_from(p)
            .with_context(|| format!("cannot read kubeconfig {}", p.display()))?,
        None => Kubeconfig::read()
            .context("cannot read a kubeconfig ($KUBECONFIG or ~/.kube/config)")?,
    };
    let context = args
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone())
        .ok_or_else(|| {
            anyhow::anyhow!("the kubeconfig has no current context; pass --context NAME")
        })?;
    let named = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref());
    let user = named.and_then(|c| c.user.clone()).unwrap_or_default();
    let cluster = named
        .map(|c| c.cluster.clone())
        .and_then(|name| kubeconfig.clusters.iter().find(|c| c.name == name))
        .and_then(|c| c.cluster.as_ref());
    let ca = cluster.map(ca_source).unwrap_or_default();
    let proxy = cluster
        .and_then(|c| c.proxy_url.as_deref())
        .map(server_name);
    // kube-rs sends no user and password to a SOCKS5 proxy: say so rather than be refused by it.
    if let Some(proxy) = cluster.and_then(|c| c.proxy_url.as_deref())
        && proxy.starts_with("socks5")
        && server_name(proxy) != proxy
    {
        anyhow::bail!(
            "the kubeconfig's proxy-url {} has a user and password, which restorewatch cannot send to a SOCKS5 proxy; use an http(s) proxy, or a SOCKS5 proxy without authentication",
            server_name(proxy)
        );
    }
    let announce = args.announce;
    super::exec_plugin::resolve(&mut kubeconfig, &context, timeouts.exec, |what| {
        tracing::info!("{what}");
        if announce {
            crate::say_err!("restorewatch: {what}");
        }
    })
    .await?;
    let opts = KubeConfigOptions {
        context: Some(context.clone()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &opts)
        .await
        .with_context(|| format!("cannot use context {context}"))?;
    let cluster_url = server_name(&config.cluster_url.to_string());
    let client = request_client(config.clone(), &timeouts).map_err(build_error)?;
    let watch_client = watch_client(config, &timeouts).map_err(build_error)?;
    Ok(Connection {
        client,
        watch_client,
        context,
        endpoint: Endpoint {
            server: cluster_url.trim_end_matches('/').to_string(),
            ca,
            request_timeout: timeouts.request,
            proxy,
        },
        cluster_url,
        user,
        timeouts,
    })
}

/// kube names a proxy by its whole URL, `user:password@` included.
fn build_error(e: kube::Error) -> anyhow::Error {
    match e {
        kube::Error::ProxyProtocolUnsupported { proxy_url }
        | kube::Error::ProxyProtocolDisabled { proxy_url, .. } => anyhow::anyhow!(
            "the kubeconfig's proxy-url {} uses a protocol restorewatch does not support (http, https and socks5 are)",
            server_name(&proxy_url.to_string())
        ),
        e => anyhow::anyhow!("cannot build a Kubernetes client: {e}"),
    }
}

fn ca_source(c: &kube::config::Cluster) -> CaSource {
    if c.insecure_skip_tls_verify == Some(true) {
        CaSource::Insecure
    } else if c.certificate_authority_data.is_some() {
        CaSource::KubeconfigData
    } else if let Some(f) = &c.certificate_authority {
        CaSource::File(f.clone())
    } else {
        CaSource::SystemRoots
    }
}

pub fn api_resource(info: &KindInfo) -> ApiResource {
    ApiResource {
        group: info.group.to_string(),
        version: info.version.to_string(),
        api_version: info.api_version(),
        kind: info.api_kind.to_string(),
        plural: info.plural.to_string(),
    }
}

/// The HTTP status of a kube error, when the server answered.
pub fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// Inside a pod with no kubeconfig given or found, use the pod's service account, as kubectl
/// and client-go do. `None` when a kubeconfig applies or this is not a pod.
fn in_cluster(args: &ConnectOptions, timeouts: Timeouts) -> anyhow::Result<Option<Connection>> {
    let kubeconfig_given =
        args.kubeconfig.is_some() || std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty());
    let default_exists = std::env::var_os("HOME")
        .map(|h| {
            std::path::Path::new(&h)
                .join(".kube")
                .join("config")
                .exists()
        })
        .unwrap_or(false);
    if kubeconfig_given || default_exists || std::env::var_os("KUBERNETES_SERVICE_HOST").is_none() {
        return Ok(None);
    }
    if args.context.is_some() {
        anyhow::bail!("--context needs a kubeconfig; inside a pod there is none");
    }
    let config = kube::Config::incluster()
        .context("cannot use the pod's service account (in-cluster configuration)")?;
    let cluster_url = server_name(&config.cluster_url.to_string());
    let client = request_client(config.clone(), &timeouts).map_err(build_error)?;
    let watch_client = watch_client(config, &timeouts).map_err(build_error)?;
    Ok(Some(Connection {
        client,
        watch_client,
        context: "in-cluster".to_string(),
        endpoint: Endpoint {
            server: cluster_url.trim_end_matches('/').to_string(),
            ca: CaSource::File("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt".into()),
            request_timeout: timeouts.request,
            proxy: None,
        },
        cluster_url,
        user: "serviceaccount".to_string(),
        timeouts,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_list_closes_its_connection() {
        let get = hyper::Method::GET;
        assert!(is_list(&get, Some("limit=500")));
        assert!(is_list(&get, None));
        assert!(!is_list(
            &get,
            Some("allowWatchBookmarks=true&resourceVersion=12&timeoutSeconds=60&watch=true")
        ));
        assert!(!is_list(
            &hyper::Method::PATCH,
            Some("fieldManager=restorewatch")
        ));
    }
}
