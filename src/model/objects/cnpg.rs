use super::super::field::Field;
use super::super::json::{array_at, at, bool_at, opt_str, str_at};
use super::super::names::{BARMAN_PLUGIN, CNPG_HEALTHY};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExternalCluster {
    pub name: String,
    pub server_name: Option<String>,
    pub object_store: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CnpgCluster {
    pub phase: Option<String>,
    /// `spec.bootstrap.recovery.source`, when the Cluster bootstraps from a backup.
    pub recovery_source: Option<String>,
    pub has_recovery: bool,
    /// Index of the barman plugin in `spec.plugins`: the JSON-patch path of its serverName.
    pub plugin_index: Option<usize>,
    /// The archive plugin's `parameters.serverName`.
    pub plugin_server_name: Field<String>,
    pub plugin_object_store: Option<String>,
    pub external_clusters: Vec<ExternalCluster>,
}

impl CnpgCluster {
    pub fn parse(v: &Value) -> Self {
        let plugins = array_at(v, &["spec", "plugins"]);
        let plugin_index = plugins
            .iter()
            .position(|p| opt_str(p, &["name"]).as_deref() == Some(BARMAN_PLUGIN));
        let plugin = plugin_index.and_then(|i| plugins.get(i));
        let external_clusters = array_at(v, &["spec", "externalClusters"])
            .iter()
            .filter_map(|e| {
                Some(ExternalCluster {
                    name: opt_str(e, &["name"])?,
                    server_name: opt_str(e, &["plugin", "parameters", "serverName"])
                        .or_else(|| opt_str(e, &["barmanObjectStore", "serverName"])),
                    object_store: opt_str(e, &["plugin", "parameters", "barmanObjectName"]),
                })
            })
            .collect();
        CnpgCluster {
            phase: opt_str(v, &["status", "phase"]),
            recovery_source: opt_str(v, &["spec", "bootstrap", "recovery", "source"]),
            has_recovery: at(v, &["spec", "bootstrap", "recovery"]).is_some(),
            plugin_index,
            plugin_server_name: plugin
                .map(|p| str_at(p, &["parameters", "serverName"]))
                .unwrap_or(Field::Missing),
            plugin_object_store: plugin
                .and_then(|p| opt_str(p, &["parameters", "barmanObjectName"])),
            external_clusters,
        }
    }

    pub fn is_healthy(&self) -> bool {
        self.phase.as_deref() == Some(CNPG_HEALTHY)
    }

    /// The external cluster the recovery reads from.
    pub fn recovery_cluster(&self) -> Option<&ExternalCluster> {
        let source = self.recovery_source.as_deref()?;
        self.external_clusters.iter().find(|e| e.name == source)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjectStore {
    pub destination_path: Option<String>,
}

impl ObjectStore {
    pub fn parse(v: &Value) -> Self {
        ObjectStore {
            destination_path: opt_str(v, &["spec", "configuration", "destinationPath"]),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CnpgBackup {
    pub phase: Option<String>,
    pub end_wal: Option<String>,
}

impl CnpgBackup {
    pub fn parse(v: &Value) -> Self {
        CnpgBackup {
            phase: opt_str(v, &["status", "phase"]),
            end_wal: opt_str(v, &["status", "endWal"]),
        }
    }
}

/// The Postgres application (`apps.cozystack.io`), served by Cozystack's aggregated API.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PostgresApp {
    pub bootstrap_enabled: Field<bool>,
    pub old_name: Option<String>,
    pub server_name: Option<String>,
    /// `spec.bootstrap.newServerName` (controller after the serverName fix; absent before).
    pub new_server_name: Option<String>,
    pub recovery_time: Option<String>,
    pub use_system_bucket: Field<bool>,
}

impl PostgresApp {
    pub fn parse(v: &Value) -> Self {
        PostgresApp {
            bootstrap_enabled: bool_at(v, &["spec", "bootstrap", "enabled"]),
            old_name: opt_str(v, &["spec", "bootstrap", "oldName"]).filter(|s| !s.is_empty()),
            server_name: opt_str(v, &["spec", "bootstrap", "serverName"]).filter(|s| !s.is_empty()),
            new_server_name: opt_str(v, &["spec", "bootstrap", "newServerName"])
                .filter(|s| !s.is_empty()),
            recovery_time: opt_str(v, &["spec", "bootstrap", "recoveryTime"])
                .filter(|s| !s.is_empty()),
            use_system_bucket: bool_at(v, &["spec", "backup", "useSystemBucket"]),
        }
    }
}
