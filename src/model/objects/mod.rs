//! Typed views of each watched kind. Each view keeps only what the analysis and the screens
//! use; the whole object stays available as compact JSON text for the YAML view.

mod backup;
mod cnpg;
mod core;
mod velero;
mod virt;

pub use backup::{AppRef, Backup, RestoreJob, RestoreOptions, RjPhase, UnderlyingDisk};
pub use cnpg::{CnpgBackup, CnpgCluster, ExternalCluster, ObjectStore, PostgresApp};
pub use core::{ClaimRef, Event, Namespace, Pod, Pv, Pvc, StorageClass};
pub use velero::{DataDownload, VeleroBackup, VeleroRestore};
pub use virt::{DataVolume, HelmRelease, VirtualMachine, Vmi};

use super::field::Field;
use super::json::{array_at, opt_str, str_at, time_at};
use super::secret_text::redact_message;
use jiff::Timestamp;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub type_: String,
    /// `True`, `False`, `Unknown`, or whatever the object says.
    pub status: Field<String>,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub last_transition: Option<Timestamp>,
}

impl Condition {
    pub fn is_true(&self) -> bool {
        self.status.as_deref() == Some("True")
    }
}

/// Free text a controller wrote (a message, a failure reason), with the credentials it quoted
/// hidden: a failed command's line or a connection string often lands in one, and every
/// output (report, `check`, `/report`, `/metrics`, the dashboard) shows these fields. Nothing
/// decides on the hidden part, and nothing writes a message back.
pub(crate) fn message_at(v: &Value, path: &[&str]) -> Option<String> {
    opt_str(v, path).map(redact_message)
}

pub(crate) fn conditions(v: &Value) -> Vec<Condition> {
    array_at(v, &["status", "conditions"])
        .iter()
        .filter_map(|c| {
            Some(Condition {
                type_: opt_str(c, &["type"])?,
                status: str_at(c, &["status"]),
                reason: opt_str(c, &["reason"]),
                message: message_at(c, &["message"]),
                last_transition: time_at(c, &["lastTransitionTime"]).known().copied(),
            })
        })
        .collect()
}

pub fn find_condition<'a>(conds: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conds.iter().find(|c| c.type_ == type_)
}
