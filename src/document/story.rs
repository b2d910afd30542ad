//! The story of one restore, as a value: what was restored and how, the verdict, the timeline,
//! each disk's chain, the Postgres serverNames, the findings and what could not be known.
//! Built from the analysed `Report`, the `Snapshot` it was made from and restorewatch's own
//! audit lines; rendered by `story_markdown` or serialised as JSON.

use super::audit_record::{self, AuditRecord};
use super::story_disks::{DiskStory, PgStory};
use super::{story_disks, story_timeline, verdict};
use crate::analysis::{Finding, Report, RestoreId, RestoreView, Step, TargetRef};
use crate::model::snapshot::{Snapshot, SourceInfo, SyncState};
use jiff::Timestamp;
use serde::{Serialize, Serializer};

/// A sentence made of our own words and values from the cluster, kept apart so that Markdown
/// can put each value in a code span while JSON gets the plain sentence.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Line(pub Vec<Piece>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// restorewatch's own words: written as they are.
    Ours(String),
    /// A name or value from the cluster: escaped wherever it is written (a code span).
    Value(String),
    /// A message from the cluster (an Event's, a finding's): escaped prose.
    Prose(String),
}

impl Line {
    pub fn ours(s: impl Into<String>) -> Line {
        Line(vec![Piece::Ours(s.into())])
    }
    pub fn say(mut self, s: impl Into<String>) -> Line {
        self.0.push(Piece::Ours(s.into()));
        self
    }
    pub fn val(mut self, s: impl Into<String>) -> Line {
        self.0.push(Piece::Value(s.into()));
        self
    }
    pub fn prose(mut self, s: impl Into<String>) -> Line {
        self.0.push(Piece::Prose(s.into()));
        self
    }
    pub fn plain(&self) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Ours(s) | Piece::Value(s) | Piece::Prose(s) => s.as_str(),
            })
            .collect()
    }
}

impl Serialize for Line {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.plain())
    }
}

/// Where a timeline fact comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FactSource {
    /// The RestoreJob's own record: created, started, completed.
    Restore,
    Event,
    /// A managedFields entry: the writer's last write of the object.
    Write,
    /// A field change the live watch saw.
    Change,
    Deleted,
    /// restorewatch's own write, from its audit log.
    Action,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fact {
    pub time: Option<Timestamp>,
    pub source: FactSource,
    /// `Kind/namespace/name`, when the fact is about one object.
    pub object: Option<String>,
    /// The writer: a field manager, or the user who ran an action.
    pub writer: Option<String>,
    /// `Apply`/`Update` for a write, the outcome for an action.
    pub operation: Option<String>,
    pub what: Line,
    /// A Warning event, a failed action: drawn marked.
    pub warning: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Story {
    pub restore: RestoreId,
    pub uid: String,
    pub target: Option<TargetRef>,
    pub driver: &'static str,
    pub in_place: bool,
    pub phase: String,
    pub message: Option<String>,
    pub created: Option<Timestamp>,
    pub started: Option<Timestamp>,
    pub completed: Option<Timestamp>,
    /// Where the picture came from (a context, dump files) and the time it was judged at.
    pub source: Line,
    pub as_of: Option<Timestamp>,
    pub verdict: Line,
    pub steps: Vec<Step>,
    pub timeline: Vec<Fact>,
    pub disks: Vec<DiskStory>,
    pub postgres: Option<PgStory>,
    pub findings: Vec<Finding>,
    /// Codes of the findings still open: every finding in the picture is, by construction;
    /// listed apart so a reader sees at once what remains to do.
    pub open: Vec<String>,
    pub unknowns: Vec<Line>,
}

/// What the caller knows of its sources beyond the picture itself.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The picture comes from a running watch (the dashboard), which keeps field changes and
    /// deletions; a dump or a one-off list does not.
    pub watching: bool,
    /// Lines of the audit log that could not be parsed.
    pub audit_unreadable: usize,
    /// The UID of the live cluster's `kube-system` namespace, when read: with the server, what
    /// the audit lines are matched against.
    pub kube_system_uid: Option<String>,
}

/// The story of `id`, or `None` when the report has no such restore.
pub fn build(
    report: &Report,
    snap: &Snapshot,
    id: &RestoreId,
    audit: &[AuditRecord],
    sources: Sources,
) -> Option<Story> {
    let r = report.restore(id)?;
    let findings: Vec<Finding> = report.findings_for(id).cloned().collect();
    let disks = story_disks::disks(r, snap);
    let mut open: Vec<String> = findings
        .iter()
        .map(|f| f.code.as_str().to_string())
        .collect();
    // Sorted by severity then code: one entry per code.
    open.dedup();
    let cluster = match &snap.source {
        SourceInfo::Live { cluster, .. } => Some(audit_record::ClusterId {
            server: cluster.clone(),
            kube_system_uid: sources.kube_system_uid.clone(),
        }),
        _ => None,
    };
    let scope = audit_record::Scope {
        cluster,
        now: report.now,
    };
    let credited = audit_record::for_restore(audit, r, &scope);
    let ours = credited.lines;
    Some(Story {
        restore: r.id.clone(),
        uid: r.uid.clone(),
        target: r.target.clone(),
        driver: r.driver.as_str(),
        in_place: r.in_place,
        phase: if r.phase.is_empty() {
            "New".into()
        } else {
            r.phase.clone()
        },
        message: r.message.clone(),
        created: r.created,
        started: r.started_at,
        completed: r.completed_at,
        source: source_name(snap),
        as_of: report.now,
        verdict: verdict::sentence(r, &findings, &disks),
        steps: r.steps.clone(),
        timeline: story_timeline::facts(r, &ours),
        postgres: r.postgres.as_ref().map(story_disks::postgres),
        disks,
        findings,
        open,
        unknowns: unknowns(r, snap, &sources, credited.unattributed),
    })
}

/// The context, server and file names are the kubeconfig's and the caller's: values too (a
/// server URL would be autolinked, a context name may be anything).
fn source_name(snap: &Snapshot) -> Line {
    let list = |l: Line, items: &[String]| {
        items.iter().enumerate().fold(
            l,
            |l, (i, f)| {
                if i > 0 { l.say(", ").val(f) } else { l.val(f) }
            },
        )
    };
    match &snap.source {
        SourceInfo::Live { context, cluster } => Line::ours("context ")
            .val(context)
            .say(" (")
            .val(cluster)
            .say(")"),
        SourceInfo::Files { files, .. } if files.is_empty() => Line::ours("a picture in memory"),
        SourceInfo::Files { files, .. } => list(Line::ours("dump "), files),
        SourceInfo::Demo { scenarios } => list(Line::ours("demo ("), scenarios).say(")"),
    }
}

/// What the picture cannot tell, each said once: kinds not readable, history the source does
/// not keep, writers a dump does not carry.
fn unknowns(r: &RestoreView, snap: &Snapshot, sources: &Sources, unattributed: usize) -> Vec<Line> {
    let mut out = Vec::new();
    for (kind, h) in &snap.health {
        let why = match &h.state {
            SyncState::Forbidden { .. } => "no access (RBAC)",
            SyncState::Failed { .. } | SyncState::Resyncing { .. } => "its watch is broken",
            SyncState::Syncing => "not listed yet",
            _ => continue,
        };
        out.push(Line::ours("").val(kind.info().plural).say(format!(
            ": not readable ({why}); findings on it are marked stale"
        )));
    }
    if sources.watching {
        out.push(Line::ours(
            "field changes and deletions before the watch started: not seen",
        ));
    } else {
        out.push(Line::ours(
            "field changes and deletions: not kept by this source (a dump or a one-off list \
             holds each object as it is now, not what it was); the timeline has the Events and \
             each writer's last write. The dashboard sees them while it watches",
        ));
    }
    let managed = r
        .history
        .iter()
        .any(|h| matches!(h.what, crate::analysis::HistoryWhat::ManagedFields { .. }));
    if !managed {
        out.push(Line::ours(
            "writers: no managedFields in the picture (a dump made without \
             `--show-managed-fields`, or stripped): who wrote each object is unknown",
        ));
    }
    if r.history.len() >= crate::analysis::history::HISTORY_PER_RESTORE {
        out.push(Line::ours(format!(
            "older history: only the newest {} entries are kept",
            crate::analysis::history::HISTORY_PER_RESTORE
        )));
    }
    if !r.steps.is_empty() {
        out.push(Line::ours(
            "step transitions: the cluster records no time for each step; the steps are shown as \
             they stand, and the timeline holds the writes and Events that moved them",
        ));
    }
    if unattributed > 0 {
        out.push(Line::ours(format!(
            "restorewatch's audit log: {unattributed} line(s) about this restore's objects do not say which cluster (or, on a dump, which RestoreJob UID) they were written to: not shown, they may be another cluster's"
        )));
    }
    if sources.audit_unreadable > 0 {
        out.push(Line::ours(format!(
            "restorewatch's audit log: {} line(s) could not be read",
            sources.audit_unreadable
        )));
    }
    out
}
