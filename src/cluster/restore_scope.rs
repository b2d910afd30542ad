//! Fresh, one-off reads of what one restore can touch, for `preflight`: every watched kind in the
//! restore's namespace, the Velero Restores the controller made for that namespace and their
//! DataDownloads, in Velero's namespace and by label (`velero_scope`), and where RBAC allows, the
//! backup controller's Deployment (`list_with` reads it: one GET, no watch).

use super::client::Connection;
use super::list_once::{Listed, Retry, list_with};

pub use super::controller_image::{BACKUP_CONTROLLER_NAMESPACE, ControllerImage};

/// Lists the namespace's objects and its Velero objects, each once, with retries.
pub async fn read_restore_scope(
    conn: &Connection,
    namespace: &str,
    retry: Retry,
) -> anyhow::Result<Listed> {
    list_with(conn, Some(namespace), retry).await
}
