//! Fresh, one-off reads of what one restore can touch, for `preflight`: every watched kind in the
//! restore's namespace, the Velero Restores in Velero's namespace (where the controller creates
//! them), and where RBAC allows, the backup controller's Deployment (`list_with` reads it: one
//! GET, no watch).

use super::client::Connection;
use super::errors::{Failure, classify, describe_at};
use super::list_once::{Listed, Retry, list_kind, list_with};
use super::{KindHealth, SyncState};
use crate::model::names::VELERO_NAMESPACE;
use crate::model::{Kind, parse_object};

pub use super::controller_image::{BACKUP_CONTROLLER_NAMESPACE, ControllerImage};

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
