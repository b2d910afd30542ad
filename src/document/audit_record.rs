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
    /// Which cluster was written to (see `actions::audit::AuditLine`); empty in lines written
    /// before it was recorded.
    #[serde(default)]
    pub server: String,
    #[serde(default)]
    pub kube_system_uid: Option<String>,
    #[serde(default)]
    pub restore_uid: String,
    /// Who the API server authenticated the writes as: `{"user", "groups"}` or `{"unknown"}`.
    #[serde(default)]
    pub authenticated: Option<serde_json::Value>,
}

impl AuditRecord {
    pub fn at(&self) -> Option<Timestamp> {
        self.time.parse().ok()
    }

    /// Who wrote, for the report's "by" column: the user the API server authenticated; the
    /// kubeconfig's user entry (a local name) only said as such when the server's is unknown.
    pub fn by(&self) -> String {
        match self
            .authenticated
            .as_ref()
            .and_then(|a| a.get("user"))
            .and_then(|u| u.as_str())
            .filter(|u| !u.is_empty())
        {
            Some(u) => u.to_string(),
            None if self.user.is_empty() => "unknown user".into(),
            None => format!("{} (kubeconfig user; not authenticated as)", self.user),
        }
    }

    /// Whether the line says which cluster it was written to.
    fn names_its_cluster(&self) -> bool {
        !self.server.is_empty()
            || self
                .kube_system_uid
                .as_deref()
                .is_some_and(|u| !u.is_empty())
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

/// The cluster a report is about, as far as it is known: a live picture knows its server (the
/// URL without userinfo) and, where readable, its `kube-system` namespace UID; a dump knows
/// neither.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterId {
    pub server: String,
    pub kube_system_uid: Option<String>,
}

/// What the report may credit: the cluster it is about (when known) and its "now" (`--now`):
/// nothing written after it.
#[derive(Debug, Clone)]
pub struct Scope {
    pub cluster: Option<ClusterId>,
    /// The picture's "now" (`--now`, else when it was read), when it has one.
    pub now: Option<Timestamp>,
}

/// The lines credited to a restore, and how many name its objects but cannot be attributed.
#[derive(Debug, Clone, Default)]
pub struct Credited<'a> {
    pub lines: Vec<&'a AuditRecord>,
    /// Lines about this restore's objects that record no cluster (written before the cluster
    /// was recorded), or, on a dump, no RestoreJob UID: they may be another cluster's.
    pub unattributed: usize,
}

fn same_cluster(a: &AuditRecord, c: &ClusterId) -> bool {
    match (a.kube_system_uid.as_deref(), c.kube_system_uid.as_deref()) {
        // The namespace UID tells clusters apart where one URL (a tunnel) reaches several.
        (Some(x), Some(y)) if !x.is_empty() && !y.is_empty() => x == y,
        _ => {
            !a.server.is_empty() && a.server.trim_end_matches('/') == c.server.trim_end_matches('/')
        }
    }
}

/// The lines about this restore: its RestoreJob, or a PVC of its disks (a reclaim of its
/// `-orig` PVC), never another cluster's, a namesake RestoreJob's, or one written after the
/// report's "now". A line is credited when
/// - it names this restore's RestoreJob UID, or names none (an `-orig` PVC of a deleted
///   RestoreJob) and was written after this RestoreJob was created;
/// - it names its cluster, and that is the report's cluster; on a dump (no cluster known), its
///   RestoreJob UID is what ties it: UIDs are unique across clusters, a namesake's is not it;
/// - it was written no later than the report's "now".
///
/// Lines written before the cluster was recorded name only a context, a local alias that two
/// kubeconfigs can share: they are never credited (that would credit another cluster's action
/// as this one's), only counted, so that the report says some were left out.
pub fn for_restore<'a>(records: &'a [AuditRecord], r: &RestoreView, scope: &Scope) -> Credited<'a> {
    let ns = &r.id.namespace;
    let mut targets = vec![format!("RestoreJob {ns}/{}", r.id.name)];
    for d in &r.disks {
        targets.push(format!("PVC {ns}/{}", d.disk));
        targets.push(format!("PVC {ns}/{}", d.orig_name));
    }
    let mut out = Credited::default();
    for a in records.iter().filter(|a| targets.contains(&a.target)) {
        let Some(at) = a.at() else { continue };
        if scope.now.is_some_and(|n| at > n) || r.created.is_some_and(|c| at < c) {
            continue;
        }
        if !a.restore_uid.is_empty() && a.restore_uid != r.uid {
            continue;
        }
        if !a.names_its_cluster() {
            out.unattributed += 1;
            continue;
        }
        let credited = match &scope.cluster {
            Some(c) => same_cluster(a, c),
            None if a.restore_uid.is_empty() => {
                out.unattributed += 1;
                continue;
            }
            None => true,
        };
        if credited {
            out.lines.push(a);
        }
    }
    out
}
