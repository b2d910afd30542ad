//! The backup controller's image, read where RBAC allows: one GET of its Deployment (never a
//! list, never a watch), so that a Role can grant exactly that object. Whatever stops the read
//! (403, 404, a timeout) is "no evidence": the controller's generation stays what the objects
//! alone show, and nothing else is held up.

use super::errors::{Endpoint, Failure, classify, describe_at};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use std::time::Duration;

/// Where Cozystack runs the backup controller.
pub const BACKUP_CONTROLLER_NAMESPACE: &str = "cozy-backup-controller";

/// The Deployment read first: Cozystack runs the restore logic (the RestoreJob reconciler and
/// its drivers) in `backupstrategy-controller`; its image is the controller that decides
/// restores. deploy/kubernetes grants `get` on exactly these names.
pub const STRATEGY_CONTROLLER_DEPLOYMENT: &str = "backupstrategy-controller";

/// Read only when the strategy controller's Deployment is absent: `backup-controller` runs
/// Plans and BackupJobs, not restores, so its image is weaker evidence (the same chart release
/// usually ships both, but nothing makes it so).
pub const BACKUP_CONTROLLER_DEPLOYMENT: &str = "backup-controller";

/// How often the dashboard and `serve` read it again: an upgrade of the controller is rare,
/// and one GET every ten minutes costs the API server nothing.
pub const REREAD_EVERY: Duration = Duration::from_secs(600);

/// What reading the backup controller's Deployment gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControllerImage {
    Found {
        deployment: String,
        image: String,
    },
    /// No such Deployment (or no apps API): nothing to tell from.
    Absent,
    /// RBAC or the server refused: said, and nothing told from it.
    Unreadable(String),
}

impl ControllerImage {
    pub fn image(&self) -> Option<&str> {
        match self {
            ControllerImage::Found { image, .. } => Some(image),
            _ => None,
        }
    }

    /// The image came from the fallback Deployment (`BACKUP_CONTROLLER_DEPLOYMENT`): weaker
    /// evidence than the strategy controller's own.
    pub fn is_fallback(&self) -> bool {
        matches!(self, ControllerImage::Found { deployment, .. } if deployment == BACKUP_CONTROLLER_DEPLOYMENT)
    }
}

/// The strategy controller's Deployment, else (absent) the backup controller's; each one GET,
/// bounded by `limit` when given. A refusal of the first is said as it is: the fallback is for a
/// cluster without the strategy controller, not a way around RBAC.
pub async fn read(
    client: &kube::Client,
    endpoint: Option<&Endpoint>,
    limit: Option<Duration>,
) -> ControllerImage {
    match read_one(client, endpoint, limit, STRATEGY_CONTROLLER_DEPLOYMENT).await {
        ControllerImage::Absent => {
            read_one(client, endpoint, limit, BACKUP_CONTROLLER_DEPLOYMENT).await
        }
        other => other,
    }
}

async fn read_one(
    client: &kube::Client,
    endpoint: Option<&Endpoint>,
    limit: Option<Duration>,
    name: &str,
) -> ControllerImage {
    let api: Api<Deployment> = Api::namespaced(client.clone(), BACKUP_CONTROLLER_NAMESPACE);
    let get = api.get(name);
    let answer = match limit {
        Some(l) => match tokio::time::timeout(l, get).await {
            Ok(a) => a,
            Err(_) => {
                return ControllerImage::Unreadable(format!("no answer within {} s", l.as_secs()));
            }
        },
        None => get.await,
    };
    let d = match answer {
        Ok(d) => d,
        Err(e) => {
            return match classify(&e) {
                Failure::Api { code: 404 } => ControllerImage::Absent,
                _ => ControllerImage::Unreadable(describe_at(&e, endpoint)),
            };
        }
    };
    match d.spec.and_then(|s| s.template.spec) {
        Some(spec) => match controller_container_image(name, &spec.containers) {
            Some(image) => ControllerImage::Found {
                deployment: name.to_string(),
                image,
            },
            None => ControllerImage::Absent,
        },
        None => ControllerImage::Absent,
    }
}

/// The controller's container: the one named like the Deployment or whose image is, else the
/// first (a sidecar such as kube-rbac-proxy must not stand for the controller).
fn controller_container_image(
    deployment: &str,
    containers: &[k8s_openapi::api::core::v1::Container],
) -> Option<String> {
    let image_named = |c: &&k8s_openapi::api::core::v1::Container| {
        c.image.as_deref().is_some_and(|i| {
            let path = i.split('@').next().unwrap_or(i);
            let last = path.rsplit('/').next().unwrap_or(path);
            last.split(':').next() == Some(deployment)
        })
    };
    containers
        .iter()
        .find(image_named)
        .or_else(|| containers.iter().find(|c| c.name == deployment))
        .or_else(|| containers.iter().find(|c| c.image.is_some()))
        .and_then(|c| c.image.clone())
}

/// `(name, image)` of a Deployment object (as a dump holds it) when it is one of the two read
/// live: a file is judged with the same evidence as the cluster it was taken from.
pub fn deployment_image(v: &serde_json::Value) -> Option<(String, String)> {
    if v.get("kind").and_then(|k| k.as_str()) != Some("Deployment") {
        return None;
    }
    let meta = v.get("metadata")?;
    if meta.get("namespace").and_then(|n| n.as_str()) != Some(BACKUP_CONTROLLER_NAMESPACE) {
        return None;
    }
    let name = meta.get("name").and_then(|n| n.as_str())?;
    if name != STRATEGY_CONTROLLER_DEPLOYMENT && name != BACKUP_CONTROLLER_DEPLOYMENT {
        return None;
    }
    let containers: Vec<k8s_openapi::api::core::v1::Container> =
        serde_json::from_value(v.pointer("/spec/template/spec/containers")?.clone()).ok()?;
    Some((
        name.to_string(),
        controller_container_image(name, &containers)?,
    ))
}

/// The image the files' Deployments give, as `read` chooses live: the strategy controller's,
/// else the backup controller's (fallback). `(image, is_fallback)`.
pub fn from_files(found: &[(String, String)]) -> Option<(String, bool)> {
    let of = |n: &str| {
        found
            .iter()
            .rev()
            .find(|(d, _)| d == n)
            .map(|(_, i)| i.clone())
    };
    of(STRATEGY_CONTROLLER_DEPLOYMENT)
        .map(|i| (i, false))
        .or_else(|| of(BACKUP_CONTROLLER_DEPLOYMENT).map(|i| (i, true)))
}
