use super::super::field::Field;
use super::super::json::{at, bool_at, i64_at, map_at, opt_str, str_at, time_at};
use super::{Condition, conditions, message_at};
use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AppRef {
    #[serde(rename = "apiGroup", skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    pub kind: String,
    pub name: String,
}

fn app_ref(v: &Value, path: &[&str]) -> Option<AppRef> {
    let r = at(v, path)?;
    Some(AppRef {
        api_group: opt_str(r, &["apiGroup"]),
        kind: opt_str(r, &["kind"]).unwrap_or_default(),
        name: opt_str(r, &["name"])?,
    })
}

/// The RestoreJob phase; anything the controller may add later stays visible as `Other`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RjPhase {
    /// No phase yet (`""` or absent): not picked up by the controller.
    #[default]
    New,
    Pending,
    Running,
    Succeeded,
    Failed,
    Other(String),
    /// The phase field has the wrong type.
    Invalid(String),
}

impl RjPhase {
    pub fn is_terminal(&self) -> bool {
        matches!(self, RjPhase::Succeeded | RjPhase::Failed)
    }

    pub fn as_str(&self) -> &str {
        match self {
            RjPhase::New => "",
            RjPhase::Pending => "Pending",
            RjPhase::Running => "Running",
            RjPhase::Succeeded => "Succeeded",
            RjPhase::Failed => "Failed",
            RjPhase::Other(s) => s,
            RjPhase::Invalid(_) => "unknown",
        }
    }

    fn parse(f: Field<String>) -> Self {
        match f {
            Field::Missing => RjPhase::New,
            Field::Invalid(raw) => RjPhase::Invalid(raw),
            Field::Known(s) => match s.as_str() {
                "" => RjPhase::New,
                "Pending" => RjPhase::Pending,
                "Running" => RjPhase::Running,
                "Succeeded" => RjPhase::Succeeded,
                "Failed" => RjPhase::Failed,
                _ => RjPhase::Other(s),
            },
        }
    }
}

/// `spec.options`, the free-form object each driver parses. Every field keeps its
/// absent/invalid distinction because a wrong type changes what the controller does (the CNPG
/// driver drops ALL options when one does not parse).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RestoreOptions {
    /// `spec.options` is present but not an object.
    pub not_an_object: Option<String>,
    pub target_namespace: Field<String>,
    pub fail_if_target_exists: Field<bool>,
    pub keep_original_pvc: Field<bool>,
    pub keep_original_ip_and_mac: Field<bool>,
    pub recovery_time: Field<String>,
    pub restore_timeout_seconds: Field<i64>,
    pub wal_archive_timeout_seconds: Field<i64>,
}

impl RestoreOptions {
    fn parse(v: &Value) -> Self {
        let Some(opts) = at(v, &["spec", "options"]) else {
            return RestoreOptions::default();
        };
        if !opts.is_object() {
            return RestoreOptions {
                not_an_object: Some(opts.to_string().chars().take(40).collect()),
                ..Default::default()
            };
        }
        // The driver passes recoveryTime on as a string and CNPG's targetTime takes RFC 3339
        // or a PostgreSQL timestamp ("2026-11-20 09:30:00", UTC without a zone): only a
        // value that is not a string fails the driver's decoding.
        let recovery_time = str_at(opts, &["recoveryTime"]);
        RestoreOptions {
            not_an_object: None,
            target_namespace: str_at(opts, &["targetNamespace"]),
            fail_if_target_exists: bool_at(opts, &["failIfTargetExists"]),
            keep_original_pvc: bool_at(opts, &["keepOriginalPVC"]),
            keep_original_ip_and_mac: bool_at(opts, &["keepOriginalIpAndMac"]),
            recovery_time,
            restore_timeout_seconds: i64_at(opts, &["restoreTimeoutSeconds"]),
            wal_archive_timeout_seconds: i64_at(opts, &["walArchiveTimeoutSeconds"]),
        }
    }

    /// Names of the Velero-driver options that have the wrong type.
    pub fn invalid_velero_fields(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.not_an_object.is_some() {
            out.push("options");
        }
        if self.target_namespace.is_invalid() {
            out.push("targetNamespace");
        }
        if self.fail_if_target_exists.is_invalid() {
            out.push("failIfTargetExists");
        }
        if self.keep_original_pvc.is_invalid() {
            out.push("keepOriginalPVC");
        }
        if self.keep_original_ip_and_mac.is_invalid() {
            out.push("keepOriginalIpAndMac");
        }
        out
    }

    /// Names of the CNPG-driver options that have the wrong type or do not parse.
    pub fn invalid_cnpg_fields(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.not_an_object.is_some() {
            out.push("options");
        }
        if self.recovery_time.is_invalid() {
            out.push("recoveryTime");
        }
        if self.restore_timeout_seconds.is_invalid() {
            out.push("restoreTimeoutSeconds");
        }
        if self.wal_archive_timeout_seconds.is_invalid() {
            out.push("walArchiveTimeoutSeconds");
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RestoreJob {
    pub backup_ref: Option<String>,
    pub target: Option<AppRef>,
    pub options: RestoreOptions,
    pub phase: RjPhase,
    pub started_at: Field<Timestamp>,
    pub completed_at: Field<Timestamp>,
    pub message: Option<String>,
    pub conditions: Vec<Condition>,
}

impl RestoreJob {
    pub fn parse(v: &Value) -> Self {
        RestoreJob {
            backup_ref: opt_str(v, &["spec", "backupRef", "name"]),
            target: app_ref(v, &["spec", "targetApplicationRef"]),
            options: RestoreOptions::parse(v),
            phase: RjPhase::parse(str_at(v, &["status", "phase"])),
            started_at: time_at(v, &["status", "startedAt"]),
            completed_at: time_at(v, &["status", "completedAt"]),
            message: message_at(v, &["status", "message"]).filter(|m| !m.is_empty()),
            conditions: conditions(v),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnderlyingDisk {
    pub data_volume: String,
    pub application: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Backup {
    pub application_ref: Option<AppRef>,
    pub strategy_ref: Option<AppRef>,
    pub driver_metadata: BTreeMap<String, String>,
    pub phase: Option<String>,
    /// Velero: the disks the backup holds. `Missing` when the Backup has no such record (fall
    /// back to the target's disks), `Invalid` when it is unreadable.
    pub data_volumes: Field<Vec<UnderlyingDisk>>,
}

impl Backup {
    pub fn parse(v: &Value) -> Self {
        // Only the disk list is read: a CNPG snapshot here carries user passwords.
        let data_volumes = match at(v, &["status", "underlyingResources", "dataVolumes"]) {
            None => Field::Missing,
            Some(Value::Array(items)) => Field::Known(
                items
                    .iter()
                    .filter_map(|d| {
                        Some(UnderlyingDisk {
                            data_volume: opt_str(d, &["dataVolumeName"])?,
                            application: opt_str(d, &["applicationName"]),
                        })
                    })
                    .collect(),
            ),
            Some(_) => Field::Invalid("dataVolumes is not a list".into()),
        };
        Backup {
            application_ref: app_ref(v, &["spec", "applicationRef"]),
            strategy_ref: app_ref(v, &["spec", "strategyRef"]),
            driver_metadata: map_at(v, &["spec", "driverMetadata"]),
            phase: opt_str(v, &["status", "phase"]),
            data_volumes,
        }
    }
}
