//! What the analysis produces: every restore with its steps and object chains, every finding,
//! and the inventory of `-orig` PVCs. Typed values only; formatting happens at draw time.

use super::codes::{ActionKind, Code, Severity};
pub use super::finding_list::FindingList;
pub use super::report_index::{NsIndex, ReportIndex};
use crate::model::{Field, Kind};
use jiff::Timestamp;
use serde::Serialize;
use std::sync::Arc;

/// `Kind/namespace/name`, the form findings name objects in (empty namespace when cluster-scoped).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjRef {
    pub kind: Kind,
    // Shared with the object's own metadata when made from it: a report names the objects of
    // every restore's history, thousands of them.
    pub namespace: crate::model::shared_str::SharedStr,
    pub name: crate::model::shared_str::SharedStr,
}

impl ObjRef {
    pub fn new(
        kind: Kind,
        namespace: impl crate::model::shared_str::OwnStr,
        name: impl crate::model::shared_str::OwnStr,
    ) -> Self {
        ObjRef {
            kind,
            namespace: namespace.own_str(),
            name: name.own_str(),
        }
    }
}

impl std::fmt::Display for ObjRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}/{}",
            self.kind.info().api_kind,
            self.namespace,
            self.name
        )
    }
}

impl Serialize for ObjRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RestoreId {
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for RestoreId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

impl Serialize for RestoreId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub code: Code,
    pub severity: Severity,
    pub restore: Option<RestoreId>,
    pub objects: Vec<ObjRef>,
    pub message: String,
    pub remedy: String,
    pub action: Option<ActionKind>,
    /// Built on a kind whose watch is not healthy: may be out of date.
    pub stale: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Driver {
    Velero,
    Cnpg,
    Other,
}

impl Driver {
    pub fn as_str(self) -> &'static str {
        match self {
            Driver::Velero => "velero",
            Driver::Cnpg => "cnpg",
            Driver::Other => "other",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepState {
    Pending,
    Active,
    Done,
    Failed,
    Skipped,
}

impl StepState {
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Pending => "pending",
            StepState::Active => "active",
            StepState::Done => "done",
            StepState::Failed => "failed",
            StepState::Skipped => "skipped",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepId {
    Validate,
    SuspendReleases,
    HaltVm,
    KeepDisks,
    DeleteDatavolumes,
    VeleroRestore,
    DataDownload,
    Complete,
    Verify,
    WalArchive,
    SuspendRelease,
    PatchApp,
    Purge,
    ResumeRelease,
    Rebootstrap,
    Healthy,
}

impl StepId {
    pub fn as_str(self) -> &'static str {
        match self {
            StepId::Validate => "validate",
            StepId::SuspendReleases => "suspend-releases",
            StepId::HaltVm => "halt-vm",
            StepId::KeepDisks => "keep-disks",
            StepId::DeleteDatavolumes => "delete-datavolumes",
            StepId::VeleroRestore => "velero-restore",
            StepId::DataDownload => "data-download",
            StepId::Complete => "complete",
            StepId::Verify => "verify",
            StepId::WalArchive => "wal-archive",
            StepId::SuspendRelease => "suspend-release",
            StepId::PatchApp => "patch-app",
            StepId::Purge => "purge",
            StepId::ResumeRelease => "resume-release",
            StepId::Rebootstrap => "rebootstrap",
            StepId::Healthy => "healthy",
        }
    }

    /// What the step does, for the timeline.
    pub fn title(self) -> &'static str {
        match self {
            StepId::Validate => "Validate the RestoreJob",
            StepId::SuspendReleases => "Suspend HelmReleases",
            StepId::HaltVm => "Halt the VM",
            StepId::KeepDisks => "Keep current disks as -orig PVCs",
            StepId::DeleteDatavolumes => "Delete DataVolumes",
            StepId::VeleroRestore => "Velero Restore",
            StepId::DataDownload => "Download disk data",
            StepId::Complete => "RestoreJob complete",
            StepId::Verify => "Verify the application is back",
            StepId::WalArchive => "WAL archive gate",
            StepId::SuspendRelease => "Suspend the HelmRelease",
            StepId::PatchApp => "Patch the Postgres app for bootstrap",
            StepId::Purge => "Purge the old Cluster and its PVCs",
            StepId::ResumeRelease => "Resume the HelmRelease",
            StepId::Rebootstrap => "Re-bootstrap from the backup",
            StepId::Healthy => "Cluster healthy",
        }
    }
}

/// Bytes moved of bytes to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
}

impl Progress {
    pub fn percent(&self) -> Option<f64> {
        (self.total > 0).then(|| self.done as f64 * 100.0 / self.total as f64)
    }
}

/// A step with its state and the line that says what it waits for or did.
pub fn step(id: StepId, state: StepState, detail: impl Into<String>) -> Step {
    Step {
        id,
        state,
        detail: detail.into(),
        progress: None,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    pub id: StepId,
    pub state: StepState,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetRef {
    pub kind: String,
    pub name: String,
}

/// Who created an `-orig` PVC, as far as the cluster tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ownership {
    /// Carries this RestoreJob's UID, or no annotation and created after it (older controller).
    Ours { annotated: bool },
    /// Carries another UID, or no annotation and created before this RestoreJob.
    Foreign { other_uid: Option<String> },
    /// No annotation and no usable timestamps.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PvcInfo {
    pub name: String,
    pub uid: String,
    pub phase: Field<String>,
    pub volume: Option<String>,
    pub created: Option<Timestamp>,
    pub deleting: bool,
    pub restore_job_uid: Option<String>,
    pub recorded_policy: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PvInfo {
    pub name: String,
    pub phase: Field<String>,
    pub reclaim_policy: Field<String>,
    /// `namespace/name` the PV's claimRef points at, and the UID if set.
    pub claim: Option<(String, Option<String>)>,
    pub recorded_policy: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadInfo {
    pub name: String,
    pub phase: Field<String>,
    pub progress: Option<Progress>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DvInfo {
    pub name: String,
    pub phase: Field<String>,
    pub progress: Option<String>,
}

/// One disk of a VM restore: DataVolume -> PVC -> PV, and the `-orig` PVC -> its PV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskChain {
    /// The DataVolume / PVC name (`vm-disk-<d>`).
    pub disk: String,
    pub data_volume: Option<DvInfo>,
    pub pvc: Option<PvcInfo>,
    pub pv: Option<PvInfo>,
    pub orig_name: String,
    pub orig: Option<PvcInfo>,
    pub orig_ownership: Option<Ownership>,
    pub orig_pv: Option<PvInfo>,
    pub download: Option<DownloadInfo>,
}

/// The serverName comparison of a Postgres restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgView {
    pub app: String,
    pub cluster_name: String,
    pub new_server_name: Option<String>,
    pub plugin_server_name: Option<Field<String>>,
    pub recovery_server_name: Option<String>,
    pub cluster_uid: Option<String>,
    pub cluster_phase: Option<String>,
    pub cluster_deleting: bool,
    pub object_store: String,
    pub object_store_owner_uid: Option<String>,
    pub archive_destination: Option<String>,
    pub recovery_destination: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLine {
    pub time: Option<Timestamp>,
    /// Shared with the stored Event (and the history), not copied per report.
    pub type_: std::sync::Arc<str>,
    pub reason: std::sync::Arc<str>,
    pub message: std::sync::Arc<str>,
    pub count: i64,
    /// The object the event is about, when not the RestoreJob itself.
    pub about: Option<ObjRef>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreView {
    pub id: RestoreId,
    pub uid: String,
    pub driver: Driver,
    pub target: Option<TargetRef>,
    pub in_place: bool,
    /// The RestoreJob's phase as written (`""` before the controller picks it up; `unknown`
    /// when unreadable).
    pub phase: String,
    pub terminal: bool,
    pub message: Option<String>,
    pub created: Option<Timestamp>,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
    /// CNPG: when the controller gives up.
    pub deadline: Option<Timestamp>,
    pub backup: Option<String>,
    /// `shortHash` of the RestoreJob name: the `-orig` suffix.
    pub hash: String,
    pub keep_original_pvc: Option<bool>,
    pub steps: Vec<Step>,
    pub disks: Vec<DiskChain>,
    pub postgres: Option<PgView>,
    pub events: Vec<EventLine>,
    /// The HelmReleases this restore suspends (and must see resumed).
    pub releases: Vec<String>,
    /// Newest change seen anywhere in the restore's object tree.
    pub last_change: Option<Timestamp>,
    pub stale: bool,
    /// Events, field managers and watched changes of the restore's objects, oldest first
    /// (bounded: `history::HISTORY_PER_RESTORE`).
    pub history: Vec<super::history::HistoryEntry>,
}

impl RestoreView {
    /// The step an operator should look at: the first failed, else the first active, else the
    /// first pending.
    pub fn current_step(&self) -> Option<&Step> {
        let by = |s: StepState| self.steps.iter().find(|st| st.state == s);
        by(StepState::Failed)
            .or_else(|| by(StepState::Active))
            .or_else(|| by(StepState::Pending))
    }
}

/// The RestoreJob that made an `-orig` PVC is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedRestore {
    pub uid: Option<String>,
}

/// An `-orig` PVC anywhere in the cluster, and whether it can be reclaimed now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrigPvcView {
    pub namespace: String,
    pub pvc: PvcInfo,
    /// The disk it keeps (`vm-disk-<d>`) and the hash in its name.
    pub base: String,
    pub hash: String,
    pub size: Option<String>,
    /// The RestoreJob that made it, when it can be told.
    pub restore: Option<RestoreId>,
    pub restore_phase: Option<String>,
    /// Left by a RestoreJob that no longer exists (its UID, when annotated): shown as such,
    /// and reclaimable, even while a new RestoreJob of the same name runs.
    pub deleted_restore: Option<DeletedRestore>,
    pub pv: Option<PvInfo>,
    /// The StorageClass's reclaim policy: the likely original when none was recorded.
    pub class_policy: Option<String>,
    /// Pods that mount it.
    pub mounted_by: Vec<String>,
    /// `Ok(policy to restore)` or why it cannot be reclaimed now.
    pub reclaim: Result<Option<String>, String>,
    /// Whether its disk is proven restored: reclaiming an unproven copy needs a typed consent.
    pub proof: super::copy_proof::CopyProof,
}

/// A report's list: the next report made with the very same items hands on the same list
/// (one reference count moved, not one per item: on a real server's dump, 2,000 of them per
/// change, each a cache miss, were most of the report's assembly).
pub type Shared<T> = Arc<Vec<Arc<T>>>;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    pub now: Option<Timestamp>,
    /// The report stands, for the same objects, at every instant from `now` until this one
    /// (the earliest stall, deadline, grace period or duration text to move on); `None` when
    /// nothing in it depends on the time.
    pub valid_until: Option<Timestamp>,
    /// Shared, so that an incremental analysis reuses the restores a change did not touch,
    /// and the list itself when no restore changed (`Shared`).
    pub restores: Shared<RestoreView>,
    /// Shared like the restores, and merged from the namespaces' findings only when read
    /// whole (`FindingList`): a restore's findings are found through `index`.
    pub findings: Arc<FindingList>,
    /// Shared like the restores: a namespace's -orig PVCs are reused until it changes.
    pub orig_pvcs: Shared<OrigPvcView>,
    /// Whether the backup controller has the fixes of report 000, from the objects' evidence.
    /// Shared: a change that does not touch the evidence (400 lines on a real server's dump)
    /// hands the same one to the next report.
    pub controller: Arc<super::controller::ControllerGeneration>,
    /// Where each restore and its findings are, so that a screen asking per row does not scan
    /// every finding for every restore (200 restores x 1,200 findings on a real server's dump).
    pub index: ReportIndex,
}

impl Report {
    /// Builds the lookup index from scratch; call after changing `restores` or `findings`
    /// (`analysis::assemble` builds it from the namespaces' own indexes instead).
    pub fn reindex(&mut self) {
        type Lists<'a> = (Vec<&'a Arc<RestoreView>>, Vec<&'a Arc<Finding>>);
        let mut by_ns: std::collections::BTreeMap<&str, Lists<'_>> = Default::default();
        for r in self.restores.iter() {
            by_ns.entry(&r.id.namespace).or_default().0.push(r);
        }
        for f in self.findings.iter() {
            if let Some(id) = &f.restore {
                by_ns.entry(&id.namespace).or_default().1.push(f);
            }
        }
        let namespaces = by_ns
            .into_iter()
            .map(|(ns, (restores, findings))| Arc::new(NsIndex::new(ns, restores, findings)))
            .collect();
        self.index = ReportIndex::from_namespaces(
            self.restores.len(),
            self.findings.stamp(),
            namespaces,
            [],
        );
    }

    fn indexed(&self) -> bool {
        self.index.fits(self.restores.len(), self.findings.stamp())
    }

    pub fn restore(&self, id: &RestoreId) -> Option<&RestoreView> {
        if self.indexed()
            && let Some(r) = self.index.restore(id).filter(|r| &r.id == id)
        {
            return Some(r);
        }
        self.restores.iter().find(|r| &r.id == id).map(|r| &**r)
    }

    /// The findings about restore `id`, in the report's order.
    pub fn findings_for<'a>(&'a self, id: &'a RestoreId) -> impl Iterator<Item = &'a Finding> + 'a {
        self.finding_arcs_for(id).map(|f| &**f)
    }

    /// `findings_for`, as the shared findings themselves (whose identity tells a reader that
    /// nothing in them changed since an earlier report).
    pub fn finding_arcs_for<'a>(
        &'a self,
        id: &'a RestoreId,
    ) -> impl Iterator<Item = &'a Arc<Finding>> + 'a {
        let indexed = self.indexed();
        let from_index = indexed
            .then(|| {
                self.index
                    .findings(id)
                    .filter(move |f| f.restore.as_ref() == Some(id))
            })
            .into_iter()
            .flatten();
        let scanned = (!indexed)
            .then(|| {
                self.findings
                    .iter()
                    .filter(move |f| f.restore.as_ref() == Some(id))
            })
            .into_iter()
            .flatten();
        from_index.chain(scanned)
    }

    /// `finding_arcs_for` the report's `pos`-th restore: the same findings, found by position
    /// when the index allows (see `ReportIndex::findings_at`).
    pub fn finding_arcs_at(&self, pos: usize) -> impl Iterator<Item = &Arc<Finding>> + '_ {
        let r = self.restores.get(pos);
        // Found by position, the lists are those filed under this very restore (its `Arc` is
        // where the position says): no finding in them is about another, so unlike `findings`
        // by id, nothing is compared (on 1,000 rows a frame, those string compares were most
        // of the lookups' time).
        let by_position = r
            .filter(|_| self.indexed())
            .and_then(|r| self.index.findings_at(pos, r));
        let slow = match by_position {
            Some(_) => None,
            None => r.map(|r| self.finding_arcs_for(&r.id)),
        };
        by_position
            .into_iter()
            .flatten()
            .chain(slow.into_iter().flatten())
    }

    /// `ReportIndex::filed_at` when the index is this report's.
    pub fn filed_at(&self, pos: usize) -> Option<super::report_index::Filed> {
        self.indexed().then(|| self.index.filed_at(pos)).flatten()
    }

    /// `ReportIndex::filed_checked` for the `pos`-th restore, when the index is this report's.
    pub fn filed_checked(&self, pos: usize) -> Option<super::report_index::Filed> {
        let r = self.restores.get(pos)?;
        self.indexed()
            .then(|| self.index.filed_checked(pos, r))
            .flatten()
    }

    pub fn worst_severity(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(restore: Option<(&str, &str)>, code: Code, message: &str) -> Finding {
        Finding {
            code,
            severity: Severity::Warning,
            restore: restore.map(|(ns, name)| RestoreId {
                namespace: ns.into(),
                name: name.into(),
            }),
            objects: Vec::new(),
            message: message.into(),
            remedy: String::new(),
            action: None,
            stale: false,
        }
    }

    fn codes(r: &Report, ns: &str, name: &str) -> Vec<String> {
        let id = RestoreId {
            namespace: ns.into(),
            name: name.into(),
        };
        r.findings_for(&id).map(|f| f.message.clone()).collect()
    }

    #[test]
    fn the_index_answers_what_a_scan_answers_and_a_stale_index_is_never_believed() {
        let mut r = Report {
            findings: vec![
                finding(Some(("a", "r1")), Code::RestoreStalled, "a1"),
                finding(Some(("b", "r1")), Code::RestoreStalled, "b1"),
                finding(None, Code::RestoreStalled, "cluster"),
                finding(Some(("a", "r1")), Code::RestoreStalled, "a2"),
            ]
            .into_iter()
            .map(std::sync::Arc::new)
            .collect::<FindingList>()
            .into(),
            ..Report::default()
        };
        let scanned = codes(&r, "a", "r1");
        assert_eq!(scanned, ["a1", "a2"]);
        r.reindex();
        assert_eq!(codes(&r, "a", "r1"), scanned, "report order kept");
        assert_eq!(codes(&r, "b", "r1"), ["b1"]);
        assert!(codes(&r, "c", "r1").is_empty());
        // Findings dropped without a reindex (as `check -n` scoping once did): still right.
        let kept = r.findings.iter().filter(|f| f.message != "a1").cloned();
        r.findings = std::sync::Arc::new(kept.collect());
        assert_eq!(codes(&r, "a", "r1"), ["a2"]);
        // A list of the same length is not the one indexed either.
        let mut swapped: Vec<_> = r.findings.iter().cloned().collect();
        if let Some(f) = swapped.iter_mut().find(|f| f.message == "a2") {
            *f = std::sync::Arc::new(finding(Some(("c", "r1")), Code::RestoreStalled, "c1"));
        }
        r.findings = std::sync::Arc::new(swapped.into());
        assert_eq!(codes(&r, "a", "r1"), Vec::<String>::new());
        assert_eq!(codes(&r, "c", "r1"), ["c1"]);
        let mut more: Vec<_> = r.findings.iter().cloned().collect();
        more.push(std::sync::Arc::new(finding(
            Some(("a", "r1")),
            Code::RestoreStalled,
            "a2",
        )));
        r.findings = std::sync::Arc::new(more.into());
        r.reindex();
        assert_eq!(codes(&r, "c", "r1"), ["c1"]);
        assert_eq!(codes(&r, "a", "r1"), ["a2"]);
    }

    fn restore(ns: &str, name: &str) -> std::sync::Arc<RestoreView> {
        std::sync::Arc::new(RestoreView {
            id: RestoreId {
                namespace: ns.into(),
                name: name.into(),
            },
            uid: String::new(),
            driver: Driver::Other,
            target: None,
            in_place: true,
            phase: String::new(),
            terminal: false,
            message: None,
            created: None,
            started_at: None,
            completed_at: None,
            deadline: None,
            backup: None,
            hash: String::new(),
            keep_original_pvc: None,
            steps: Vec::new(),
            disks: Vec::new(),
            postgres: None,
            events: Vec::new(),
            releases: Vec::new(),
            last_change: None,
            stale: false,
            history: Vec::new(),
        })
    }

    #[test]
    fn by_position_a_row_gets_its_restores_findings_whatever_the_order_of_the_restores() {
        // Not grouped by namespace (a reindexed report's restores can come in any order), a
        // namespace without restores, and two restores with one id.
        let mut r = Report {
            restores: std::sync::Arc::new(vec![
                restore("b", "r1"),
                restore("a", "r1"),
                restore("b", "r2"),
                restore("a", "r1"),
                restore("c", "r9"),
            ]),
            findings: vec![
                finding(Some(("a", "r1")), Code::RestoreStalled, "a1"),
                finding(Some(("b", "r2")), Code::RestoreStalled, "b2"),
                finding(Some(("b", "r1")), Code::RestoreStalled, "b1"),
                finding(Some(("n", "none")), Code::RestoreStalled, "orphan"),
                finding(Some(("a", "r1")), Code::RestoreStalled, "a1 again"),
            ]
            .into_iter()
            .map(std::sync::Arc::new)
            .collect::<FindingList>()
            .into(),
            ..Report::default()
        };
        let expect = |r: &Report| -> Vec<Vec<String>> {
            r.restores
                .iter()
                .map(|v| codes(r, &v.id.namespace, &v.id.name))
                .collect()
        };
        let by_position = |r: &Report| -> Vec<Vec<String>> {
            (0..r.restores.len())
                .map(|i| r.finding_arcs_at(i).map(|f| f.message.clone()).collect())
                .collect()
        };
        // Unindexed, then indexed: the same answers as by id.
        assert_eq!(by_position(&r), expect(&r));
        r.reindex();
        assert_eq!(
            by_position(&r),
            [
                vec!["b1"],
                vec!["a1", "a1 again"],
                vec!["b2"],
                vec!["a1", "a1 again"],
                vec![]
            ]
        );
        // Grouped as `assemble` gives them: the same again.
        std::sync::Arc::make_mut(&mut r.restores)
            .sort_by(|x, y| x.id.namespace.cmp(&y.id.namespace));
        r.reindex();
        assert_eq!(by_position(&r), expect(&r));
        assert_eq!(by_position(&r)[0], ["a1", "a1 again"]);
        assert!(r.finding_arcs_at(99).next().is_none(), "no such row");
    }
}
