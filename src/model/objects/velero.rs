use super::super::field::Field;
use super::super::json::{array_at, i64_at, opt_str, str_at, time_at};
use super::message_at;
use crate::model::secret_text::redact_message;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VeleroRestore {
    pub phase: Field<String>,
    pub backup_name: Option<String>,
    pub items_restored: Option<i64>,
    pub total_items: Option<i64>,
    pub validation_errors: Vec<String>,
    pub failure_reason: Option<String>,
    pub errors: Option<i64>,
    pub warnings: Option<i64>,
}

impl VeleroRestore {
    pub fn parse(v: &Value) -> Self {
        VeleroRestore {
            phase: str_at(v, &["status", "phase"]),
            backup_name: opt_str(v, &["spec", "backupName"]),
            items_restored: i64_at(v, &["status", "progress", "itemsRestored"])
                .known()
                .copied(),
            total_items: i64_at(v, &["status", "progress", "totalItems"])
                .known()
                .copied(),
            validation_errors: array_at(v, &["status", "validationErrors"])
                .iter()
                .filter_map(|e| e.as_str().map(|e| redact_message(e.to_string())))
                .collect(),
            // Velero writes `failureReason: ""` on a PartiallyFailed restore: no reason at all.
            failure_reason: message_at(v, &["status", "failureReason"])
                .filter(|r| !r.trim().is_empty()),
            errors: i64_at(v, &["status", "errors"]).known().copied(),
            warnings: i64_at(v, &["status", "warnings"]).known().copied(),
        }
    }

    /// Velero's terminal phases; anything else, `FailedValidation` included, keeps the
    /// controller waiting.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self.phase.as_deref(),
            Some("Completed" | "Failed" | "PartiallyFailed")
        )
    }

    pub fn is_failed(&self) -> bool {
        matches!(self.phase.as_deref(), Some("Failed" | "PartiallyFailed"))
    }

    /// Velero is done with it but the controller is not: `FailedValidation` is final for Velero
    /// (it never retries a Restore), and the controller ends a restore only on `Completed`,
    /// `Failed` or `PartiallyFailed`, so it waits forever.
    pub fn is_rejected(&self) -> bool {
        self.phase.as_deref() == Some("FailedValidation")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataDownload {
    pub phase: Field<String>,
    pub target_pvc: Option<String>,
    pub target_namespace: Option<String>,
    pub target_pv: Option<String>,
    pub bytes_done: Option<i64>,
    pub total_bytes: Option<i64>,
    pub message: Option<String>,
    /// `status.completionTimestamp`: when it finished, as Velero reports it.
    pub completed_at: Option<jiff::Timestamp>,
}

impl DataDownload {
    pub fn parse(v: &Value) -> Self {
        DataDownload {
            phase: str_at(v, &["status", "phase"]),
            target_pvc: opt_str(v, &["spec", "targetVolume", "pvc"]),
            target_namespace: opt_str(v, &["spec", "targetVolume", "namespace"]),
            target_pv: opt_str(v, &["spec", "targetVolume", "pv"]),
            bytes_done: i64_at(v, &["status", "progress", "bytesDone"])
                .known()
                .copied(),
            total_bytes: i64_at(v, &["status", "progress", "totalBytes"])
                .known()
                .copied(),
            message: message_at(v, &["status", "message"]),
            completed_at: time_at(v, &["status", "completionTimestamp"])
                .known()
                .copied(),
        }
    }

    pub fn is_failed(&self) -> bool {
        matches!(
            self.phase.as_deref(),
            Some("Failed" | "Canceled" | "Canceling")
        )
    }

    pub fn is_completed(&self) -> bool {
        self.phase.as_deref() == Some("Completed")
    }
}

/// A Velero `Backup` (`velero.io/v1`, in Velero's namespace): what a Velero Restore reads. A
/// Restore of a Backup that is gone or expired fails validation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VeleroBackup {
    pub phase: Field<String>,
    /// `status.expiration`: when Velero's garbage collection deletes it (its TTL).
    pub expiration: Option<jiff::Timestamp>,
}

impl VeleroBackup {
    pub fn parse(v: &Value) -> Self {
        VeleroBackup {
            phase: str_at(v, &["status", "phase"]),
            expiration: time_at(v, &["status", "expiration"]).known().copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_failure_reason_is_no_reason() {
        // Velero's PartiallyFailed restore of the real run (dump 05): `failureReason: ""`.
        let v = serde_json::json!({"status": {"phase": "PartiallyFailed", "failureReason": "", "errors": 1}});
        assert_eq!(VeleroRestore::parse(&v).failure_reason, None);
        let v = serde_json::json!({"status": {"phase": "Failed", "failureReason": "timed out"}});
        assert_eq!(
            VeleroRestore::parse(&v).failure_reason.as_deref(),
            Some("timed out")
        );
    }
}
