//! restorewatch's own writes, read back from its audit log (one JSON object a line, as
//! `actions::audit` appends them) and matched to a restore. Parsing is pure: the caller reads
//! the file. A line that does not parse is counted, not fatal: the log may be cut short by a
//! crash, or written by a newer version.

use crate::analysis::{RestoreView, Severity};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct AuditRecord {
    pub time: String,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub context: String,
    #[serde(default)]
    pub action: String,
    #[serde(default)]
    pub target: String,
    #[serde(default)]
    pub operation: String,
    #[serde(default)]
    pub precondition: String,
    #[serde(default)]
    pub outcome: String,
}

impl AuditRecord {
    pub fn at(&self) -> Option<Timestamp> {
        self.time.parse().ok()
    }

    /// A failed or refused write is worth a warning mark in the report.
    pub fn severity(&self) -> Severity {
        let o = self.outcome.to_ascii_lowercase();
        if o.starts_with("ok") || o.starts_with("done") || o.starts_with("already") {
            Severity::Info
        } else {
            Severity::Warning
        }
    }
}

/// Every parsed line, and how many lines could not be read.
pub fn parse(log: &str) -> (Vec<AuditRecord>, usize) {
    let mut out = Vec::new();
    let mut bad = 0;
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<AuditRecord>(line) {
            Ok(r) => out.push(r),
            Err(_) => bad += 1,
        }
    }
    (out, bad)
}

/// The lines about this restore: its RestoreJob, or a PVC of its disks (a reclaim of its
/// `-orig` PVC), written after the RestoreJob was created, so that a deleted predecessor of the
/// same name does not lend it its repairs. `context`, when known, must match too.
pub fn for_restore<'a>(
    records: &'a [AuditRecord],
    r: &RestoreView,
    context: Option<&str>,
) -> Vec<&'a AuditRecord> {
    let ns = &r.id.namespace;
    let mut targets = vec![format!("RestoreJob {ns}/{}", r.id.name)];
    for d in &r.disks {
        targets.push(format!("PVC {ns}/{}", d.disk));
        targets.push(format!("PVC {ns}/{}", d.orig_name));
    }
    records
        .iter()
        .filter(|a| targets.contains(&a.target))
        .filter(|a| context.is_none_or(|c| a.context == c))
        .filter(|a| match (r.created, a.at()) {
            (Some(created), Some(at)) => at >= created,
            _ => true,
        })
        .collect()
}
