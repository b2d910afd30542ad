//! The finding catalog: stable codes, their severity, and the action each offers. Codes are a
//! public contract (scripts match on them): never rename one.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

macro_rules! codes {
    ($($variant:ident = $code:literal, $sev:ident, $action:expr, $title:literal;)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// The catalog severity; a finding may raise or lower it where the catalog says so.
            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$sev,)* }
            }

            /// The action restorewatch offers for this finding, if any.
            pub fn action(self) -> Option<ActionKind> {
                match self { $(Code::$variant => $action,)* }
            }

            /// A short title for lists and help.
            pub fn title(self) -> &'static str {
                match self { $(Code::$variant => $title,)* }
            }

            pub fn parse(s: &str) -> Option<Code> {
                match s { $($code => Some(Code::$variant),)* _ => None }
            }
        }
    };
}

codes! {
    OrigPvcForeign = "orig-pvc-foreign", Error, None, "-orig name held by another RestoreJob's PVC";
    RenameHalfDone = "rename-half-done", Error, Some(ActionKind::ResumeRename), "disk rename stopped halfway";
    DiskNotKept = "disk-not-kept", Error, None, "current disk was not kept";
    DiskNotRestored = "disk-not-restored", Error, None, "disk was not restored";
    ReclaimLeakRisk = "reclaim-leak-risk", Warning, Some(ActionKind::ReclaimOrig), "deleting the -orig PVC would leak its volume";
    ReclaimPolicyUnrecorded = "reclaim-policy-unrecorded", Warning, Some(ActionKind::ReclaimOrig), "original reclaim policy not recorded";
    OrigNameTooLong = "orig-name-too-long", Error, None, "-orig PVC name longer than 253 characters";
    OrigHashCollision = "orig-hash-collision", Warning, None, "two RestoreJobs share an -orig hash";
    VmNotHalted = "vm-not-halted", Error, None, "restore went on while the VM runs";
    VmHaltStuck = "vm-halt-stuck", Warning, None, "VM does not shut down";
    KeepOriginalDisabled = "keep-original-disabled", Warning, None, "current disks will not be kept";
    VeleroRestoreStuck = "velero-restore-stuck", Warning, None, "Velero Restore makes no progress";
    VeleroRestoreFailed = "velero-restore-failed", Error, None, "Velero Restore failed";
    VeleroRestoreStale = "velero-restore-stale", Error, None, "Velero Restore left by a predecessor: nothing restored";
    OrigBindStuck = "orig-bind-stuck", Warning, None, "renamed disk never bound to its -orig PVC";
    VeleroRestoreRejected = "velero-restore-rejected", Error, None, "Velero rejected the Restore: the controller waits forever";
    VeleroBackupMissing = "velero-backup-missing", Error, None, "the Velero Backup to restore from is missing or expired";
    MountedDiskRenamed = "mounted-disk-renamed", Error, None, "disk renamed under a running VM";
    ServernameReverted = "servername-reverted", Error, Some(ActionKind::FixServername), "archive serverName reverted";
    ServernameCollision = "servername-collision", Error, None, "archive and recovery share one WAL prefix";
    ObjectstoreOwnerStale = "objectstore-owner-stale", Error, None, "ObjectStore owned by a purged Cluster";
    ObjectstoreMissing = "objectstore-missing", Error, None, "the Cluster's archive ObjectStore is missing";
    RestoreDeadlineNear = "restore-deadline-near", Warning, None, "restore deadline close";
    PurgeStuck = "purge-stuck", Warning, None, "purge of the old Cluster does not finish";
    SystemBucketBootstrap = "system-bucket-bootstrap", Error, None, "bootstrap with the system bucket cannot render";
    MalformedOptions = "malformed-options", Error, None, "restore options do not parse";
    HelmreleaseLeftSuspended = "helmrelease-left-suspended", Warning, Some(ActionKind::ResumeRelease), "HelmRelease left suspended";
    ConcurrentRestores = "concurrent-restores", Warning, None, "two restores of one application";
    RestoreFailed = "restore-failed", Error, None, "restore failed";
    RestoreStalled = "restore-stalled", Warning, None, "restore makes no progress";
    WatchStale = "watch-stale", Warning, None, "watch down: data may be old";
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The repair actions restorewatch can run. The registry of what each applies to lives in
/// `actions`; this enum is shared so findings can name their action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub enum ActionKind {
    ResumeRename,
    ReclaimOrig,
    FixServername,
    ResumeRelease,
    RestartRestore,
}

impl ActionKind {
    pub const ALL: &'static [ActionKind] = &[
        ActionKind::ResumeRename,
        ActionKind::ReclaimOrig,
        ActionKind::FixServername,
        ActionKind::ResumeRelease,
        ActionKind::RestartRestore,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::ResumeRename => "resume-rename",
            ActionKind::ReclaimOrig => "reclaim-orig",
            ActionKind::FixServername => "fix-servername",
            ActionKind::ResumeRelease => "resume-release",
            ActionKind::RestartRestore => "restart-restore",
        }
    }

    pub fn parse(s: &str) -> Option<ActionKind> {
        ActionKind::ALL.iter().copied().find(|a| a.as_str() == s)
    }
}

impl Serialize for ActionKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()), "duplicate {c}");
            assert_eq!(Code::parse(c.as_str()), Some(*c));
        }
        assert_eq!(Code::ALL.len(), 31);
    }
}
