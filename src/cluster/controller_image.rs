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

/// The Deployment read: the backup controller itself (backupstrategy-controller runs beside
/// it, but only the backup controller decides restores). deploy/kubernetes grants `get` on
/// exactly this name.
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
}

/// One GET of the backup controller's Deployment, bounded by `limit` when given.
pub async fn read(
    client: &kube::Client,
    endpoint: Option<&Endpoint>,
    limit: Option<Duration>,
) -> ControllerImage {
    let api: Api<Deployment> = Api::namespaced(client.clone(), BACKUP_CONTROLLER_NAMESPACE);
    let get = api.get(BACKUP_CONTROLLER_DEPLOYMENT);
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
    let image = d
        .spec
        .and_then(|s| s.template.spec)
        .and_then(|s| s.containers.into_iter().find_map(|c| c.image));
    match image {
        Some(image) => ControllerImage::Found {
            deployment: BACKUP_CONTROLLER_DEPLOYMENT.to_string(),
            image,
        },
        None => ControllerImage::Absent,
    }
}
