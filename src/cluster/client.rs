//! Connecting to a cluster the way kubectl does: `--kubeconfig`, `$KUBECONFIG`, `--context`.

use crate::cli::common::ClusterArgs;
use crate::model::KindInfo;
use anyhow::Context as _;
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;

/// A client plus the names the header shows.
pub struct Connection {
    pub client: Client,
    pub context: String,
    pub cluster_url: String,
    /// The kubeconfig user, for the audit log.
    pub user: String,
}

pub async fn connect(args: &ClusterArgs) -> anyhow::Result<Connection> {
    if let Some(conn) = in_cluster(args)? {
        return Ok(conn);
    }
    let kubeconfig = match &args.kubeconfig {
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
    let user = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
        .and_then(|c| c.user.clone())
        .unwrap_or_default();
    let opts = KubeConfigOptions {
        context: Some(context.clone()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &opts)
        .await
        .with_context(|| format!("cannot use context {context}"))?;
    let cluster_url = config.cluster_url.to_string();
    let client = Client::try_from(config).context("cannot build a Kubernetes client")?;
    Ok(Connection {
        client,
        context,
        cluster_url,
        user,
    })
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
fn in_cluster(args: &ClusterArgs) -> anyhow::Result<Option<Connection>> {
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
    let cluster_url = config.cluster_url.to_string();
    let client = Client::try_from(config).context("cannot build a Kubernetes client")?;
    Ok(Some(Connection {
        client,
        context: "in-cluster".to_string(),
        cluster_url,
        user: "serviceaccount".to_string(),
    }))
}
