//! Fresh, one-off reads of what one restore can touch, for `preflight`: every watched kind in the
//! restore's namespace, the Velero Restores in Velero's namespace (where the controller creates
//! them), and where RBAC allows, the backup controller's Deployment (one list, no watch).

use super::client::Connection;
use super::errors::{Failure, classify, describe_at};
use super::list_once::{Listed, Retry, list_kind, list_with};
use super::{KindHealth, SyncState};
use crate::model::names::VELERO_NAMESPACE;
use crate::model::{Kind, parse_object};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, ListParams};

/// Where Cozystack runs the backup controller.
pub const BACKUP_CONTROLLER_NAMESPACE: &str = "cozy-backup-controller";

/// Lists the namespace's objects and Velero's Restores, each once, with retries.
pub async fn read_restore_scope(
    conn: &Connection,
    namespace: &str,
    retry: Retry,
) -> anyhow::Result<Listed> {
    let mut listed = list_with(conn, Some(namespace), retry).await?;
    let info = Kind::VeleroRestore.info();
    let health = match list_kind(conn, info, Some(VELERO_NAMESPACE), retry).await {
        Ok(items) => {
            for item in items {
                let mut v = serde_json::to_value(item).unwrap_or_default();
                if let Some(o) = v.as_object_mut() {
                    o.insert("apiVersion".into(), info.api_version().into());
                    o.insert("kind".into(), info.api_kind.into());
                }
                if let Ok(obj) = parse_object(v) {
                    listed.snapshot.objects.insert(obj);
                }
            }
            listed.unreadable.retain(|u| u.kind != Kind::VeleroRestore);
            KindHealth {
                state: SyncState::Synced,
                last_event: Some(jiff::Timestamp::now()),
            }
        }
        Err(e) => {
            let error = describe_at(&e, Some(&conn.endpoint));
            let state = match classify(&e) {
                Failure::Api { code: 404 } => SyncState::NotInstalled,
                Failure::Api { code: 403 } => SyncState::Forbidden { error },
                _ => SyncState::Failed {
                    since: jiff::Timestamp::now(),
                    error,
                },
            };
            KindHealth {
                state,
                last_event: None,
            }
        }
    };
    listed.snapshot.health.insert(Kind::VeleroRestore, health);
    Ok(listed)
}

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

/// The backup controller's image, from one list of the Deployments in its namespace.
pub async fn backup_controller_image(conn: &Connection) -> ControllerImage {
    let api: Api<Deployment> = Api::namespaced(conn.client.clone(), BACKUP_CONTROLLER_NAMESPACE);
    let list = match api.list(&ListParams::default()).await {
        Ok(l) => l,
        Err(e) => {
            return match classify(&e) {
                Failure::Api { code: 404 } => ControllerImage::Absent,
                _ => ControllerImage::Unreadable(describe_at(&e, Some(&conn.endpoint))),
            };
        }
    };
    // backupstrategy-controller runs beside it: only the backup controller decides restores.
    let found = list.items.into_iter().find_map(|d| {
        let name = d.metadata.name.clone().unwrap_or_default();
        if !name.ends_with("backup-controller") || name.contains("strategy") {
            return None;
        }
        let image = d
            .spec?
            .template
            .spec?
            .containers
            .into_iter()
            .find_map(|c| c.image)?;
        Some(ControllerImage::Found {
            deployment: name,
            image,
        })
    });
    found.unwrap_or(ControllerImage::Absent)
}
